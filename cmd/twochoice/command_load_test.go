package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	bolt "go.etcd.io/bbolt"

	"github.com/twochoice/twochoice/internal/testutil"
)

// loadSummary runs load on a key file and returns its JSON summary.
func loadSummary(t *testing.T, keys string, flags ...string) map[string]any {
	t.Helper()
	snap := filepath.Join(t.TempDir(), "k.snap")
	code, out, errOut := runCLI(append([]string{"load", "--keys", keys, "--out", snap, "--format", "json", "--quiet"}, flags...)...)
	if code != 0 {
		t.Fatalf("load %s %v: exit %d, stderr %q", keys, flags, code, errOut)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// load reads the key files serve reads: a Zstandard file is decompressed
// (its compressed bytes are never stored as keys), CRLF line endings are dropped, and a binary file or an overlong line is
// a clear error that writes no snapshot.
func TestLoadKeyFiles(t *testing.T) {
	dir := t.TempDir()
	var plain bytes.Buffer
	for i := range 3000 {
		fmt.Fprintf(&plain, "key-%s-%d\n", strings.Repeat("x", i%7), i)
	}
	write := func(name string, b []byte) string { return writeTestFile(t, dir, name, b) }
	enc, _ := zstd.NewWriter(nil)
	want := loadSummary(t, write("keys.txt", plain.Bytes()))
	for name, b := range map[string][]byte{
		"keys.txt.zst": enc.EncodeAll(plain.Bytes(), nil),
		"keys.crlf":    bytes.ReplaceAll(plain.Bytes(), []byte("\n"), []byte("\r\n")),
		"keys.nonl":    bytes.TrimSuffix(plain.Bytes(), []byte("\n")),
	} {
		got := loadSummary(t, write(name, b))
		if fmt.Sprint(got["entries"], got["histogram"]) != fmt.Sprint(want["entries"], want["histogram"]) {
			t.Errorf("%s: entries %v histogram %v, the plain file %v %v", name, got["entries"], got["histogram"], want["entries"], want["histogram"])
		}
	}
	for _, tc := range []struct {
		name string
		data []byte
		msg  string
	}{
		{"binary", []byte("ab\x00cd\nef\n"), "keys.binary:1: workload: malformed line: NUL byte"},
		{"long", []byte("ok\n" + strings.Repeat("x", 1<<20+1) + "\n"), "keys.long:2: workload: malformed line: longer than"},
		{"badzst", append(enc.EncodeAll(plain.Bytes(), nil)[:40:40], 0xff, 0xff), "keys.badzst"},
		// No key at all: refused, as sim and serve refuse it, not saved
		// as a snapshot of an empty store.
		{"empty", nil, "workload: no keys: "},
		{"blank", []byte("\n\t1\n\r\n"), "workload: no keys: "},
		{"emptyzst", enc.EncodeAll(nil, nil), "workload: no keys: "},
	} {
		p := write("keys."+tc.name, tc.data)
		snap := filepath.Join(dir, tc.name+".snap")
		code, _, errOut := runCLI("load", "--keys", p, "--out", snap, "--quiet")
		if code != exitFail || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%s: exit %d, stderr %q (want %q)", tc.name, code, errOut, tc.msg)
		}
		if _, err := os.Stat(snap); err == nil {
			t.Errorf("%s: a failed load wrote %s", tc.name, snap)
		}
	}
}

// load --out through a symbolic link replaces the snapshot the link points
// to and keeps the link; the link's own directory need not take files
// (here a read-only tmpfs, where root can mount one): the temporary file
// goes beside the target, and the link is not replaced by a regular file.
func TestLoadOutSymlink(t *testing.T) {
	keys := writeKeys(t, 50)
	other := t.TempDir()
	target := filepath.Join(other, "real.snap")
	linkDir := t.TempDir()
	readOnly := false
	if os.Geteuid() == 0 {
		linkDir = testutil.SmallTmpfs(t, "1m")
	}
	link := filepath.Join(linkDir, "link.snap")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		readOnly = exec.Command("mount", "-o", "remount,ro", linkDir).Run() == nil
	}
	for range 2 { // creating the target, then replacing it
		if code, _, errOut := runCLI("load", "--keys", keys, "--out", link, "--quiet"); code != 0 {
			t.Fatalf("load --out %s (read-only directory: %v): exit %d, %s", link, readOnly, code, errOut)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("the link was replaced: %v", err)
		}
		if code, out, errOut := runCLI("inspect", target, "--format", "json"); code != 0 || !strings.Contains(out, `"entries": 50`) {
			t.Fatalf("inspect the target: exit %d, %s%s", code, out, errOut)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(other, "*.tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	t.Logf("the link's directory read-only: %v", readOnly)
}

// Ctrl-C during load's save abandons it cleanly: the temporary file is
// removed, the snapshot already at --out is untouched, and load exits 1
// with one line on stderr, rather than dying with the temporary file left
// until the next save to that path. The test signals
// as soon as the temporary file appears, so the save is under way; then
// again while the keys are read.
func TestLoadInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command as a process of its own")
	}
	dir := t.TempDir()
	keys := writeNumberedKeys(t, dir, 400_000)
	out := filepath.Join(dir, "k.snap")
	small := writeKeys(t, 10)
	if code, _, errOut := runCLI("load", "--keys", small, "--out", out, "--quiet"); code != 0 {
		t.Fatalf("the first load: %s", errOut)
	}
	before := readFile(t, out)
	for _, during := range []string{"save", "read"} {
		ready := waitFor(50 * time.Millisecond)
		if during == "save" {
			ready = func(done <-chan error) {
				for {
					if tmp, _ := filepath.Glob(out + ".tmp-*"); len(tmp) > 0 {
						return
					}
					select {
					case err := <-done:
						t.Fatalf("load ended before its save was seen: %v", err)
					case <-time.After(time.Millisecond):
					}
				}
			}
		}
		interruptCommand(t, "Ctrl-C during the "+during, []string{"load", "--keys", keys, "--out", out, "--quiet"}, ready)
		if left, _ := filepath.Glob(out + ".tmp-*"); len(left) != 0 {
			t.Errorf("Ctrl-C during the %s left %v", during, left)
		}
		if !bytes.Equal(readFile(t, out), before) {
			t.Errorf("Ctrl-C during the %s changed the snapshot at --out", during)
		}
	}
}

// Ctrl-C while inspect reads a large snapshot (seconds) stops it with exit
// status 1 and "interrupted", not killed by the signal without a word.
func TestInspectInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command as a process of its own")
	}
	dir := t.TempDir()
	keys := writeNumberedKeys(t, dir, 600_000)
	snap := filepath.Join(dir, "k.snap")
	if code, _, errOut := runCLI("load", "--keys", keys, "--out", snap, "--quiet"); code != 0 {
		t.Fatalf("load: exit %d, %s", code, errOut)
	}
	interruptCommand(t, "inspect", []string{"inspect", snap, "--quiet"}, waitFor(200*time.Millisecond))
}

// writeNumberedKeys writes a key file of n keys, key-0 to key-(n-1), to
// dir and returns its path: a file large enough that reading or saving it
// takes the interrupt tests' signal.
func writeNumberedKeys(t *testing.T, dir string, n int) string {
	t.Helper()
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "key-%d\n", i)
	}
	return writeTestFile(t, dir, "keys.txt", b.Bytes())
}

// --size-hint sizes the table up front: the same keys over more buckets,
// every key still stored; a hint out of range is a usage error.
func TestLoadSizeHint(t *testing.T) {
	keys := writeNumberedKeys(t, t.TempDir(), 2000)
	grown := loadSummary(t, keys)
	sized := loadSummary(t, keys, "--size-hint", "100000")
	if sized["entries"] != grown["entries"] || sized["entries"] != float64(2000) {
		t.Errorf("entries %v with the hint, %v without; want 2000", sized["entries"], grown["entries"])
	}
	if gb, sb := grown["buckets"].(float64), sized["buckets"].(float64); sb < 20*gb {
		t.Errorf("%v buckets with --size-hint 100000, %v without: want the hint's table", sb, gb)
	}
	loadRefuses(t, keys, "size-hint", "-1", "268435457", "x")
}

// loadRefuses checks that load with --flag set to each of bad is a usage
// error naming the flag, and writes no snapshot.
func loadRefuses(t *testing.T, keys, flag string, bad ...string) {
	t.Helper()
	snap := filepath.Join(t.TempDir(), "bad.snap")
	for _, v := range bad {
		code, _, errOut := runCLI("load", "--keys", keys, "--out", snap, "--"+flag, v)
		if code != exitUsage || !strings.Contains(errOut, flag) {
			t.Errorf("--%s %s: exit %d, stderr %q; want a usage error naming the flag", flag, v, code, errOut)
		}
		if _, err := os.Stat(snap); err == nil {
			t.Errorf("--%s %s: a snapshot was written", flag, v)
		}
	}
}

// --growth sets the factor the table grows by: 700 keys from the
// smallest table end in 128 buckets by 2 and in 144 by 1.5 (go-left with
// d = 2 grows at 0.80 of 8 slots, 6.4 keys a bucket: by 2 the sizes are
// 8, 16, ..., 64 (409 keys), 128 (819); by 1.5 8, 12, 18, 28, 42, 64,
// 96 (614 keys), 144); a factor out of range is a usage error.
func TestLoadGrowth(t *testing.T) {
	keys := writeNumberedKeys(t, t.TempDir(), 700)
	want := map[string]float64{"0": 128, "2": 128, "1.5": 144}
	for g, wb := range want {
		sum := loadSummary(t, keys, "--growth", g)
		if sum["entries"] != float64(700) || sum["buckets"] != wb {
			t.Errorf("--growth %s: %v entries in %v buckets, want 700 in %v", g, sum["entries"], sum["buckets"], wb)
		}
	}
	loadRefuses(t, keys, "growth", "1", "4.5", "-2", "NaN", "x")
}

// A report that cannot be printed says the snapshot was saved all the
// same, in JSON as in the table: a bare write error would read as if the
// load had failed.
func TestLoadReportUnprintedSaysSaved(t *testing.T) {
	keys := writeKeys(t, 10)
	for _, format := range []string{"table", "json"} {
		snap := filepath.Join(t.TempDir(), "k.snap")
		var e bytes.Buffer
		code := run([]string{"load", "--keys", keys, "--out", snap, "--quiet", "--format", format}, failWriter{}, &e)
		if code != exitFail || !strings.Contains(e.String(), "the snapshot is saved") || !strings.Contains(e.String(), "no space left") {
			t.Errorf("--format %s: code %d, stderr %q", format, code, e.String())
		}
		if _, err := os.Stat(snap); err != nil {
			t.Errorf("--format %s: %v", format, err)
		}
	}
}

// load --out on a file another process is writing is refused before any
// work, and says so: the advice for a damaged file ("remove it") would
// destroy the other process's work.
func TestLoadOutLocked(t *testing.T) {
	keys := writeKeys(t, 50)
	out := filepath.Join(t.TempDir(), "busy.snap")
	if code, _, errOut := runCLI("load", "--keys", keys, "--out", out, "--quiet"); code != 0 {
		t.Fatalf("first load: exit %d, %s", code, errOut)
	}
	db, err := bolt.Open(out, 0o644, nil) // read-write: an exclusive lock
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	code, _, errOut := runCLI("load", "--keys", keys, "--out", out, "--quiet")
	if code != exitUsage || !strings.Contains(errOut, "another process") || strings.Contains(errOut, "remove it") {
		t.Fatalf("load --out on a locked snapshot: exit %d, stderr %q; want a usage error that names the other process", code, errOut)
	}
}

// load --out replaces a snapshot, and nothing else.
func TestLoadOutClobber(t *testing.T) {
	dir := t.TempDir()
	keys := writeKeys(t, 50)
	data, err := os.ReadFile(keys)
	if err != nil {
		t.Fatal(err)
	}
	// Its own input, under another name too.
	link := filepath.Join(dir, "link.txt")
	if err := os.Link(keys, link); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(other, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{keys, link, other, empty} {
		code, _, errOut := runCLI("load", "--keys", keys, "--out", out, "--quiet")
		if code != exitUsage || !strings.Contains(errOut, "--out") {
			t.Errorf("--out %s: code %d, stderr %q", out, code, errOut)
		}
	}
	if got, _ := os.ReadFile(keys); string(got) != string(data) {
		t.Errorf("the key file changed")
	}
	if got, _ := os.ReadFile(other); string(got) != "precious\n" {
		t.Errorf("notes.txt changed: %q", got)
	}
	snap := filepath.Join(dir, "k.snap")
	for i := range 2 { // a new file, then a snapshot replaced
		if code, _, errOut := runCLI("load", "--keys", keys, "--out", snap, "--quiet"); code != 0 {
			t.Fatalf("load %d: code %d, stderr %q", i, code, errOut)
		}
	}
}
