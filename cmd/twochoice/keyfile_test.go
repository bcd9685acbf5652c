package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Every command that reads a key file reads it the same way
// (workload.ScanKeyFile): a file with CRLF endings, blank lines, a TSV
// column and a line past 64 KiB, or the same file compressed, gives load,
// sim --keys and hash (on stdin) exactly the keys of a plain file of one
// key a line: no blank line read as a key, no tab as part of one, no
// compressed bytes read as lines.
func TestKeyFileSameEverywhere(t *testing.T) {
	keys := []string{"alpha", "beta gamma", strings.Repeat("L", 100<<10), "delta", "alpha"}
	for i := range 60 {
		keys = append(keys, fmt.Sprintf("user:%d", i))
	}
	var messy bytes.Buffer
	for i, k := range keys {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&messy, "%s\r\n", k)
		case 1:
			fmt.Fprintf(&messy, "%s\t%d\tcolumn\n\n", k, i)
		case 2:
			fmt.Fprintf(&messy, "\n\r\n%s\n", k)
		case 3:
			fmt.Fprintf(&messy, "\tnot a key\n%s\n", k)
		}
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string { return writeTestFile(t, dir, name, b) }
	enc, _ := zstd.NewWriter(nil)
	clean := write("clean.txt", []byte(strings.Join(keys, "\n")+"\n"))
	files := []string{write("messy.tsv", messy.Bytes()), write("messy.tsv.zst", enc.EncodeAll(messy.Bytes(), nil))}

	sim := func(p string) string {
		t.Helper()
		code, out, errOut := runCLI("sim", "--keys", p, "--rule", "dchoice", "--bins", "64", "--runs", "1", "--format", "json", "--quiet")
		if code != 0 {
			t.Fatalf("sim --keys %s: exit %d, stderr %q", p, code, errOut)
		}
		row := oneJSONRow(t, out) // one rule and size: an array of one
		return fmt.Sprint(row["balls"], row["share_at_least"], row["max_load_runs"])
	}
	load := func(p string) string {
		t.Helper()
		m := loadSummary(t, p)
		return fmt.Sprint(m["entries"], m["histogram"], m["stash"])
	}
	hashed := func(p string) []string {
		t.Helper()
		var got []string
		withStdin(t, string(readFile(t, p)), func() {
			for _, r := range hashJSON(t) {
				got = append(got, r.Key)
			}
		})
		return got
	}
	wantSim, wantLoad := sim(clean), load(clean)
	if got := hashed(clean); !slices.Equal(got, keys) {
		t.Fatalf("hash < clean file: %d keys, want %d", len(got), len(keys))
	}
	for _, p := range files {
		name := filepath.Base(p)
		if got := sim(p); got != wantSim {
			t.Errorf("sim --keys %s: %s, the plain file %s", name, got, wantSim)
		}
		if got := load(p); got != wantLoad {
			t.Errorf("load --keys %s: %s, the plain file %s", name, got, wantLoad)
		}
		if got := hashed(p); !slices.Equal(got, keys) {
			t.Errorf("hash < %s: %d keys %.40q, want %d %.40q", name, len(got), got, len(keys), keys)
		}
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeTestFile writes b to dir/name and returns the path.
func writeTestFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A key file that cannot be read gets one line from every command that
// reads key files: the command's name once (twochoice CMD:), the file's
// path once, exit status 1: no package prefix after the command's
// ("twochoice serve: serve: bad key file: ..."), no path twice ("read d:
// is a directory (d)"), and a file named .zst that is not Zstandard is an
// error, not plain text.
func TestKeyFileMessages(t *testing.T) {
	dir := t.TempDir()
	bad := map[string]string{
		"missing":   filepath.Join(dir, "missing.txt"),
		"directory": filepath.Join(dir, "keys.d"),
		"not zstd":  writeTestFile(t, dir, "plain.txt.zst", []byte("alpha\nbeta\n")),
		"binary":    writeTestFile(t, dir, "binary.txt", []byte("alpha\nbe\x00ta\n")),
	}
	if err := os.Mkdir(bad["directory"], 0o755); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"missing": "no such file", "directory": "is a directory", "not zstd": "not Zstandard", "binary": "NUL byte"}
	commands := map[string]func(p string) []string{
		"load": func(p string) []string {
			return []string{"--keys", p, "--out", filepath.Join(dir, "out.snap"), "--quiet"}
		},
		"sim": func(p string) []string { return []string{"--keys", p, "--quiet"} },
		"serve": func(p string) []string {
			return []string{"--keys", p, "--workload", "none", "--addr", "127.0.0.1:0", "--quiet"}
		},
		"bench": func(p string) []string { return []string{"--workload", "keys:" + p, "--duration", "10ms"} },
	}
	for cmd, args := range commands {
		for kind, p := range bad {
			code, out, errOut := runCLIWithin(t, time.Minute, append([]string{cmd}, args(p)...)...)
			line := strings.TrimSuffix(errOut, "\n")
			switch {
			case code != exitFail || out != "" || strings.Contains(line, "\n"):
				t.Errorf("%s, %s file: exit %d, stdout %q, stderr %q; want exit 1 and one line", cmd, kind, code, out, errOut)
			case !strings.HasPrefix(line, "twochoice "+cmd+": ") || strings.Count(line, " "+cmd+":") != 1:
				t.Errorf("%s, %s file: %q names the command other than once", cmd, kind, line)
			case strings.Count(line, p) != 1 && (strings.Count(line, p) != 0 || strings.Count(line, filepath.Base(p)) != 1):
				// (bench names a key file's lines by its base name, as its
				// tables name the workload.)
				t.Errorf("%s, %s file: %q names the file other than once", cmd, kind, line)
			case !strings.Contains(line, want[kind]):
				t.Errorf("%s, %s file: %q does not say %q", cmd, kind, line, want[kind])
			}
			for other := range commands {
				if other != cmd && strings.Contains(line, " "+other+":") {
					t.Errorf("%s, %s file: %q names another command (%s)", cmd, kind, line, other)
				}
			}
		}
	}
}

// "--keys -" (bench: "--workload keys:-") reads the keys from standard
// input, as Unix tools read "-": every command that reads a key file, with
// the same keys as from the file, and the source called "stdin" in the
// output and the errors, never a file named "-".
func TestKeysDashIsStdin(t *testing.T) {
	var b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&b, "user:%d\n", i)
	}
	keys := b.String()
	dir := t.TempDir()

	withStdin(t, keys, func() {
		code, out, errOut := runCLI("load", "--keys", "-", "--out", filepath.Join(dir, "k.snap"), "--format", "json", "--quiet")
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); code != 0 || err != nil || m["entries"] != float64(500) {
			t.Errorf("load --keys -: exit %d, stderr %q, %v, entries %v; want 500", code, errOut, err, m["entries"])
		}
	})
	withStdin(t, keys, func() {
		code, out, errOut := runCLI("sim", "--keys", "-", "--rule", "dchoice", "--bins", "64", "--runs", "1", "--format", "json", "--quiet")
		if code != 0 {
			t.Fatalf("sim --keys -: exit %d, stderr %q", code, errOut)
		}
		if row := oneJSONRow(t, out); row["balls"] != float64(500) || row["keys"] != "stdin" {
			t.Errorf("sim --keys -: balls %v, keys %v; want 500 and stdin", row["balls"], row["keys"])
		}
	})
	withStdin(t, keys, func() {
		code, out, errOut := runCLIWithin(t, time.Minute, "bench", "--workload", "keys:-", "--capacity", "10", "--threads", "1", "--caches", "lru", "--duration", "1ms", "--format", "json", "--quiet")
		rows := []map[string]any{}
		if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) == 0 || rows[0]["workload"] != "keys:stdin" {
			t.Errorf("bench --workload keys:-: exit %d, stderr %q, out %.300s", code, errOut, out)
		}
	})
	// An empty stdin is an empty key file, called stdin.
	withStdin(t, "", func() {
		code, _, errOut := runCLI("load", "--keys", "-", "--out", filepath.Join(dir, "e.snap"), "--quiet")
		if code != exitFail || !strings.Contains(errOut, "stdin") || strings.Contains(errOut, " -") {
			t.Errorf("load --keys - on an empty stdin: exit %d, stderr %q", code, errOut)
		}
	})
	// A bad line is stdin's line, as hash says.
	withStdin(t, "a\nb\x00\n", func() {
		code, _, errOut := runCLI("sim", "--keys", "-", "--quiet")
		if code != exitFail || !strings.Contains(errOut, "stdin:2:") {
			t.Errorf("sim --keys - with a NUL byte: exit %d, stderr %q", code, errOut)
		}
	})

	if testing.Short() {
		return // serve starts a server
	}
	page, stop := startServeStdin(t, strings.NewReader(keys), "--keys", "-", "--workload", "none")
	if !strings.HasSuffix(page, "/stdin") {
		t.Errorf("serve --keys -: page %s, want the store named stdin", page)
	}
	resp, err := http.Get(page + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Entries int `json:"entries"`
	}
	err = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if err != nil || doc.Entries != 500 {
		t.Errorf("serve --keys -: %d entries, %v; want 500", doc.Entries, err)
	}
	stop()
}
