package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/internal/snapshot"
	"github.com/twochoice/twochoice/internal/testutil"
	"github.com/twochoice/twochoice/store"
)

// writeKeys writes n keys, every third line as TSV with more columns.
func writeKeys(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		if i%3 == 0 {
			fmt.Fprintf(&b, "user:%d\t%d\tx\n", i, i)
		} else {
			fmt.Fprintf(&b, "user:%d\n", i)
		}
	}
	b.WriteString("\n") // an empty line is skipped
	p := filepath.Join(t.TempDir(), "keys.tsv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var summaryFields = []string{"entries", "buckets", "bucket_size", "placement", "choices", "hash", "seed",
	"histogram", "stash", "max_load", "share_at_least", "fluid_share_at_least"}

// load and inspect print the same JSON for a store and its snapshot, with
// exactly the summary's fields, but for the seed: load gives it only with
// --show-seed (null otherwise, as it was not), inspect always; the
// snapshot opens as a store holding each key with its line number.
func TestLoadInspectRoundTrip(t *testing.T) {
	keys := writeKeys(t, 20000)
	dir := t.TempDir()
	for _, args := range [][]string{
		{},
		{"--placement", "dchoice", "--choices", "3", "--bucket-size", "4", "--hash", "tabulation", "--seed", "77"},
		{"--placement", "one", "--bucket-size", "2"},
	} {
		snap := filepath.Join(dir, fmt.Sprint(len(args), ".snap"))
		code, hidden, errOut := runCLI(append([]string{"load", "--keys", keys, "--out", snap, "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("load %v: code %d, stderr %q", args, code, errOut)
		}
		code, inspOut, errOut := runCLI("inspect", snap, "--format", "json")
		if code != 0 {
			t.Fatalf("inspect: code %d, stderr %q", code, errOut)
		}
		seed := regexp.MustCompile(`"seed": \d+,`)
		if seed.FindString(hidden) != "" || !strings.Contains(hidden, `"seed": null,`) || seed.ReplaceAllString(inspOut, `"seed": null,`) != hidden {
			t.Fatalf("load without --show-seed: want inspect's JSON with the seed null:\n%s\n%s", hidden, inspOut)
		}
		code, loadOut, errOut := runCLI(append([]string{"load", "--keys", keys, "--out", snap, "--format", "json", "--show-seed"}, args...)...)
		if code != 0 {
			t.Fatalf("load %v --show-seed: code %d, stderr %q", args, code, errOut)
		}
		if loadOut != inspOut {
			t.Fatalf("load --show-seed and inspect disagree:\n%s\n%s", loadOut, inspOut)
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(inspOut), &obj); err != nil {
			t.Fatal(err)
		}
		var got []string
		for k := range obj {
			got = append(got, k)
		}
		slices.Sort(got)
		want := slices.Clone(summaryFields)
		slices.Sort(want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("JSON fields %v, want %v", got, want)
		}
		if obj["entries"].(float64) != 20000 || len(obj["histogram"].([]any)) != int(obj["bucket_size"].(float64))+1 {
			t.Fatalf("JSON: %s", inspOut)
		}
		s, err := store.OpenMap[string, uint64](snap, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range []int{0, 1, 2, 9999, 19999} {
			if v, ok := s.Get(fmt.Sprint("user:", i)); !ok || v != uint64(i+1) {
				t.Fatalf("user:%d = %d, %v; want its line number %d", i, v, ok, i+1)
			}
		}
	}
	snap := filepath.Join(dir, "0.snap")
	code, out, _ := runCLI("load", "--keys", keys, "--out", filepath.Join(dir, "t.snap"))
	if code != 0 || !strings.Contains(out, "saved 20000 entries") || !strings.Contains(out, "fluid limit") {
		t.Fatalf("load table: code %d\n%s", code, out)
	}
	code, out, _ = runCLI("inspect", "--quiet", snap)
	for _, want := range []string{"format version 1", "key type string, value type uint64", "key shape string\nvalue shape uint64\n", "bucket/fluid", "20000 entries"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("inspect table lacks %q (code %d):\n%s", want, code, out)
		}
	}
	for _, ext := range []string{"svg", "png"} {
		p := filepath.Join(dir, "load."+ext)
		if code, _, errOut := runCLI("inspect", snap, "--plot", p); code != 0 {
			t.Fatalf("plot: %d %q", code, errOut)
		}
		if fi, err := os.Stat(p); err != nil || fi.Size() < 100 {
			t.Fatalf("%s: %v", p, err)
		}
	}
}

// A snapshot saved by a build that did not record the key and value
// shapes has none in its metadata: inspect says so, and that Open then checks
// the type names alone, instead of printing empty shapes.
func TestInspectWithoutShapes(t *testing.T) {
	snap := filepath.Join(t.TempDir(), "old.snap")
	if code, _, errOut := runCLI("load", "--keys", writeKeys(t, 100), "--out", snap, "--quiet"); code != 0 {
		t.Fatalf("load: code %d, stderr %q", code, errOut)
	}
	testutil.RewriteMeta(t, snap, func(m *snapshot.Meta) { m.KeyDesc, m.ValueDesc = nil, nil }, 0)
	code, out, errOut := runCLI("inspect", "--quiet", snap)
	if code != 0 {
		t.Fatalf("inspect: code %d, stderr %q", code, errOut)
	}
	want := "key type string, value type uint64, max entries 0 (0: unbounded), checksum"
	if !strings.Contains(out, want) || !strings.Contains(out, "\nkey and value shapes not recorded (saved before they were): Open checks the type names alone\n") || strings.Contains(out, "key shape") {
		t.Fatalf("inspect of a file without shapes:\n%s", out)
	}
	if _, err := store.OpenMap[string, uint64](snap, nil); err != nil {
		t.Fatalf("a file without shapes, opened with the types it names: %v", err)
	}
}

func TestLoadInspectErrors(t *testing.T) {
	dir := t.TempDir()
	keys := writeKeys(t, 100)
	snap := filepath.Join(dir, "s.snap")
	text := filepath.Join(dir, "text.snap")
	os.WriteFile(text, []byte(strings.Repeat("hello\n", 2000)), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"load", "--out", snap}, exitUsage, "--keys"},
		{[]string{"load", "--keys", keys}, exitUsage, "--out"},
		{[]string{"load", "--keys", keys, "--out", snap, "--format", "csv"}, exitUsage, "csv"},
		{[]string{"load", "--keys", keys, "--out", snap, "--placement", "best"}, exitUsage, "best"},
		{[]string{"load", "--keys", keys, "--out", snap, "--bucket-size", "9"}, exitUsage, "BucketSize"},
		{[]string{"load", "--keys", keys, "--out", snap, "--choices", "9"}, exitUsage, ""},
		{[]string{"load", "--keys", keys, "--out", snap, "extra"}, exitUsage, "extra"},
		{[]string{"load", "--keys", filepath.Join(dir, "none"), "--out", snap}, exitFail, "none"},
		{[]string{"load", "--keys", keys, "--out", filepath.Join(dir, "no", "dir", "s.snap")}, exitUsage, "no/dir"},
		{[]string{"inspect"}, exitUsage, "no snapshot"},
		{[]string{"inspect", text, "extra"}, exitUsage, "extra"},
		{[]string{"inspect", text, "--format", "csv"}, exitUsage, "csv"},
		// An unknown format names the two this command prints, not csv.
		{[]string{"inspect", text, "--format", "xml"}, exitUsage, `"xml" (want table or json)`},
		{[]string{"load", "--keys", keys, "--out", snap, "--format", "xml"}, exitUsage, `"xml" (want table or json)`},
		{[]string{"inspect", text}, exitFail, "not a twochoice snapshot"},
		{[]string{"inspect", filepath.Join(dir, "none.snap")}, exitFail, "not found"},
	} {
		code, out, errOut := runCLI(tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.msg) || out != "" {
			t.Errorf("%v: code %d (want %d), stdout %q, stderr %q (want %q)", tc.args, code, tc.code, out, errOut, tc.msg)
		}
	}
	if _, err := os.Stat(snap); err == nil {
		t.Errorf("a failed load wrote %s", snap)
	}
}

// inspect reads snapshots of any key and value types without knowing them.
func TestInspectOtherTypes(t *testing.T) {
	type rec struct {
		Name string
		N    int
	}
	dir := t.TempDir()
	si, err := store.NewMap[int64, [16]byte](store.MapOptions{Placement: bucket.Halves, Choices: 3, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	ss, err := store.NewMap[[8]byte, rec](store.MapOptions{BucketSize: 4, Hash: 1, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5000 {
		si.Set(int64(i)*-7, [16]byte{byte(i)})
		ss.Set([8]byte{byte(i), byte(i >> 8)}, rec{fmt.Sprint(i), i})
	}
	for name, save := range map[string]func(string) error{"int.snap": si.Save, "struct.snap": ss.Save} {
		p := filepath.Join(dir, name)
		if err := save(p); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runCLI("inspect", p, "--format", "json")
		var sum snapSummary
		if code != 0 || json.Unmarshal([]byte(out), &sum) != nil || sum.Entries != 5000 {
			t.Fatalf("%s: code %d, stderr %q, out %s", name, code, errOut, out)
		}
	}
	// The table shows the shapes that Open checks.
	code, out, _ := runCLI("inspect", "--quiet", filepath.Join(dir, "struct.snap"))
	if want := "key shape [8]uint8\nvalue shape main.rec struct { Name string; N int }\n"; code != 0 || !strings.Contains(out, want) {
		t.Fatalf("inspect table lacks %q (code %d):\n%s", want, code, out)
	}
}

// A cache's summary has no fluid limit, as the store's own load report
// has none for a cache: the limit does not model evictions.
func TestSnapSummaryCacheHasNoFluid(t *testing.T) {
	parts := [][]uint64{{0, 0, 1, 3}, {0, 1, 2, 1}}
	for _, cache := range []bool{false, true} {
		s, err := newSnapSummary(parts, 0, bucket.GoLeft, 2, 3, "xxhash", 1, cache)
		if err != nil {
			t.Fatal(err)
		}
		if (s.FluidShareAtLeast == nil) != cache {
			t.Errorf("cache %v: fluid shares %v", cache, s.FluidShareAtLeast)
		}
	}
}

// load checks that --out can be written before it reads a single key: a
// missing directory, or a file where the directory should be, found only
// at the save would throw the loaded store away. (The key file here does
// not exist, so an --out checked after reading it is never reached.)
func TestLoadOutCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "keys.txt")
	outs := []string{filepath.Join(dir, "nosuch", "k.snap"), filepath.Join(file, "k.snap")}
	if os.Geteuid() == 0 { // else ReadOnlyDir skips the whole test
		outs = append(outs, filepath.Join(testutil.ReadOnlyDir(t), "k.snap"))
	}
	for _, out := range outs {
		code, stdout, errOut := runCLI("load", "--keys", missing, "--out", out, "--quiet")
		if code != exitUsage || !strings.Contains(errOut, "--out") || stdout != "" {
			t.Errorf("--out %s: code %d, stderr %q", out, code, errOut)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 1 {
		t.Errorf("files left: %v", left)
	}
}

// inspect reads a snapshot of a 2^32-bucket table with few records (as a
// store that grew and then lost its keys saves, or a doctored file claims)
// with memory that follows the records, not a byte per bucket (4 GiB).
// The records are still checked against the histogram.
func TestInspectHugeTable(t *testing.T) {
	const n = 1 << 32
	dir := t.TempDir()
	write := func(name string, buckets []int64, hist [][]uint64) string {
		p := filepath.Join(dir, name)
		w, err := snapshot.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		enc := snapshot.NewEncoder[string, uint64]()
		for i, b := range buckets {
			rec, _ := enc.EncodeRecord(fmt.Sprint("k", i), uint64(i), 0, b)
			if err := w.Append(rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Commit(snapshot.Meta{KeyType: "string", ValueType: "uint64", Placement: "goleft", Choices: 2, BucketSize: 8,
			Hash: "xxhash", Seed: 1, Buckets: n, Histogram: hist}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Three records: two in bucket 5 (part 0), one in bucket 2^31 + 7.
	buckets := []int64{5, 5, 1<<31 + 7}
	good := write("good.snap", buckets, [][]uint64{{n/2 - 1, 0, 1, 0, 0, 0, 0, 0, 0}, {n/2 - 1, 1, 0, 0, 0, 0, 0, 0, 0}})
	bad := write("bad.snap", buckets, [][]uint64{{n/2 - 2, 2, 0, 0, 0, 0, 0, 0, 0}, {n/2 - 1, 1, 0, 0, 0, 0, 0, 0, 0}})
	for _, tc := range []struct {
		path, want string
		code       int
	}{
		{good, `"buckets": 4294967296`, exitOK},
		{bad, "the records give loads", exitFail},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		code, out, errOut := runCLI("inspect", tc.path, "--format", "json", "--quiet")
		runtime.ReadMemStats(&after)
		if code != tc.code || !strings.Contains(out+errOut, tc.want) {
			t.Errorf("inspect %s: exit %d, stdout %q, stderr %q; want %d and %q", filepath.Base(tc.path), code, out, errOut, tc.code, tc.want)
		}
		if a := after.TotalAlloc - before.TotalAlloc; a > 64<<20 {
			t.Errorf("inspect %s allocated %d MiB", filepath.Base(tc.path), a>>20)
		}
	}
}

// inspect reads the snapshot of a cache that was given fewer, larger
// buckets than BucketSize (10 entries, buckets of 1, double hashing: 5
// buckets of 2 slots): it checked records against BucketSize and called
// the file corrupt at its second record.
func TestInspectCacheWithLargerBuckets(t *testing.T) {
	o := store.CacheOptions[string, uint64]{MaxEntries: 10, BucketSize: 1, Placement: bucket.DoubleHash, Seed: 3}
	s, err := store.NewCache[string, uint64](o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		s.Set(fmt.Sprintf("key:%d", i), uint64(i))
	}
	p := filepath.Join(t.TempDir(), "small.snap")
	if err := s.Save(p); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI("inspect", p, "--format", "json")
	if code != 0 {
		t.Fatalf("inspect: exit %d, %s", code, errOut)
	}
	var sum struct {
		Entries    uint64   `json:"entries"`
		Buckets    uint64   `json:"buckets"`
		BucketSize int      `json:"bucket_size"`
		Histogram  []uint64 `json:"histogram"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if sum.Entries != 10 || sum.Buckets != 5 || sum.BucketSize != 2 || !slices.Equal(sum.Histogram, []uint64{0, 0, 5}) {
		t.Errorf("inspect says %+v, want 10 entries in 5 full buckets of 2", sum)
	}
}
