package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twochoice/twochoice/bucket/fluid"
	"github.com/twochoice/twochoice/internal/testutil"
)

// runCLIWithin is runCLI that fails the test, instead of hanging it, when
// the command has not returned within d.
func runCLIWithin(t *testing.T, d time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	type result struct {
		code      int
		out, errs string
	}
	done := make(chan result, 1)
	go func() {
		c, o, e := runCLI(args...)
		done <- result{c, o, e}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.errs
	case <-time.After(d):
		t.Fatalf("%v: still running after %v", args, d)
		return 0, "", ""
	}
}

// A load whose ball count does not fit is a usage error, not a run of 2^63
// balls.
func TestSimHugeLoad(t *testing.T) {
	for _, args := range [][]string{
		{"--log2", "10", "--load", "1e300"},
		{"--bins", "3", "--load", "3.1e15"},
		{"--log2", "0", "--load", "2e16"},
		{"--log2", "40", "--load", "1e4"},
	} {
		args = append([]string{"sim", "--runs", "1", "--rule", "dchoice", "--quiet"}, args...)
		code, _, errOut := runCLIWithin(t, 10*time.Second, args...)
		if code != exitUsage || !strings.Contains(errOut, "2^53") {
			t.Errorf("%v: code %d, stderr %q", args, code, errOut)
		}
	}
}

// Past fluid.MaxLoad sim shows the simulation without the limit, and fluid
// refuses the load as a usage error with the solver's message.
func TestSimAndFluidAboveMaxLoad(t *testing.T) {
	args := []string{"sim", "--bins", "16", "--load", "2000", "--runs", "1", "--rule", "dchoice", "--quiet"}
	code, out, errOut := runCLIWithin(t, 20*time.Second, args...)
	if code != 0 || !strings.Contains(errOut, "no fluid limit") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("table: code %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "dchoice fluid") || !strings.Contains(out, " -") || strings.Contains(out, belowFloor) {
		t.Errorf("table without a limit:\n%s", out)
	}
	code, out, errOut = runCLIWithin(t, 20*time.Second, append(args, "--format", "csv")...)
	if code != 0 {
		t.Fatalf("csv: code %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 {
		t.Fatalf("csv:\n%s", out)
	}
	for _, l := range lines[1:] {
		if f := strings.Split(l, ","); f[9] != "" {
			t.Errorf("csv share_fluid %q, want empty: %s", f[9], l)
		}
	}
	code, out, errOut = runCLIWithin(t, 20*time.Second, append(args, "--format", "json")...)
	if code != 0 || !strings.Contains(out, `"share_at_least"`) || strings.Contains(out, "fluid") {
		t.Errorf("json: code %d, stderr %q, out %s", code, errOut, out)
	}
	code, _, errOut = runCLIWithin(t, 20*time.Second, "fluid", "--load", "2000")
	if code != exitUsage || !strings.Contains(errOut, "above 1024") {
		t.Errorf("fluid --load 2000: code %d, stderr %q", code, errOut)
	}
	code, _, errOut = runCLIWithin(t, 20*time.Second, "fluid", "--capacity", "5000")
	if code != exitUsage || !strings.Contains(errOut, "--capacity 5000") || !strings.Contains(errOut, "1024") {
		t.Errorf("fluid --capacity 5000: code %d, stderr %q", code, errOut)
	}
}

// A bad --plot is refused before any work, as a usage error.
func TestPlotCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "k.snap")
	if code, _, errOut := runCLI("load", "--keys", writeKeys(t, 100), "--out", snap, "--quiet"); code != 0 {
		t.Fatalf("load: %d %q", code, errOut)
	}
	for _, plot := range []string{filepath.Join(dir, "out.txt"), filepath.Join(dir, "nosuch", "x.svg")} {
		for _, args := range [][]string{
			// Long enough to fail the deadline if the work ran first.
			{"sim", "--log2", "30", "--runs", "50", "--rule", "dchoice", "--quiet"},
			{"bench", "--keys", "100000000", "--duration", "1s"},
			{"fluid", "--rule", "goleft", "--d", "8", "--load", "1000"},
			{"inspect", snap},
		} {
			args = append(args, "--plot", plot)
			code, _, errOut := runCLIWithin(t, 5*time.Second, args...)
			if code != exitUsage || !strings.Contains(errOut, "--plot") {
				t.Errorf("%v: code %d, stderr %q", args, code, errOut)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
		t.Errorf("out.txt written")
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

// A cache that cannot take a capacity is skipped with a note, the rest is
// measured; a capacity past the workload's keys is a usage error.
func TestBenchSmallAndHugeCapacity(t *testing.T) {
	code, out, errOut := runCLIWithin(t, 60*time.Second, "bench", "--keys", "100", "--duration", "5ms", "--threads", "1", "--caches", "twochoice-goleft,2q,map", "--format", "csv")
	if code != 0 || !strings.Contains(errOut, "skipped twochoice-goleft at capacity 1") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"\n2q,\"zipf(s=1,n=100,seed=1)\",1,", "\ntwochoice-goleft,\"zipf(s=1,n=100,seed=1)\",10,"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q row:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\ntwochoice-goleft,\"zipf(s=1,n=100,seed=1)\",1,") {
		t.Errorf("a row for the skipped pair:\n%s", out)
	}
	code, _, errOut = runCLIWithin(t, 60*time.Second, "bench", "--keys", "1000", "--capacity", "2000", "--duration", "5ms", "--threads", "1")
	if code != exitUsage || !strings.Contains(errOut, "distinct keys") {
		t.Errorf("capacity past the keys: code %d, stderr %q", code, errOut)
	}
	code, _, errOut = runCLIWithin(t, 60*time.Second, "bench", "--keys", "1000", "--capacity", "1000000000000", "--duration", "5ms", "--threads", "1")
	if code != exitUsage || !strings.Contains(errOut, "at most 16777216") {
		t.Errorf("huge capacity: code %d, stderr %q", code, errOut)
	}
}

func TestBenchShortDuration(t *testing.T) {
	for _, d := range []string{"1ns", "999us"} {
		code, _, errOut := runCLIWithin(t, 30*time.Second, "bench", "--keys", "10000", "--caches", "twochoice-goleft,map", "--duration", d, "--threads", "1")
		if code != exitUsage || !strings.Contains(errOut, "--duration") {
			t.Errorf("--duration %s: code %d, stderr %q", d, code, errOut)
		}
	}
}

// 0 choices or slots is a usage error, not the library's default.
func TestZeroChoicesAndBucketSize(t *testing.T) {
	keys := writeKeys(t, 10)
	out := filepath.Join(t.TempDir(), "b.snap")
	for _, args := range [][]string{
		{"sim", "--log2", "10", "--d", "0", "--rule", "goleft", "--runs", "1"},
		{"sim", "--log2", "10", "--d", "-1", "--rule", "one", "--runs", "1"},
		{"load", "--keys", keys, "--out", out, "--bucket-size", "0"},
		{"load", "--keys", keys, "--out", out, "--choices", "0"},
		{"load", "--keys", keys, "--out", out, "--placement", "one", "--choices", "3"},
		{"serve", "--keys", keys, "--addr", "127.0.0.1:0", "--choices", "0"},
		{"serve", "--keys", keys, "--addr", "127.0.0.1:0", "--bucket-size", "0"},
		{"hash", "--d", "0", "foo"},
	} {
		code, _, errOut := runCLIWithin(t, 10*time.Second, args...)
		if code != exitUsage {
			t.Errorf("%v: code %d, stderr %q", args, code, errOut)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a snapshot was written")
	}
}

func TestBenchThreadsBound(t *testing.T) {
	code, _, errOut := runCLIWithin(t, 10*time.Second, "bench", "--keys", "1000", "--threads", "1,100000", "--duration", "1ms")
	if code != exitUsage || !strings.Contains(errOut, "at most 1024") {
		t.Errorf("code %d, stderr %q", code, errOut)
	}
}

func TestHashFormats(t *testing.T) {
	args := []string{"hash", "--rule", "dchoice", "--d", "3", "--bins", "64"}
	keys := []string{"alpha", "beta"}
	code, out, errOut := runCLI(append(append(args, "--format", "json"), keys...)...)
	var rows []struct {
		Key        string   `json:"key"`
		Hash       string   `json:"hash"`
		Candidates []uint64 `json:"candidates"`
	}
	if code != 0 {
		t.Fatalf("json: code %d, stderr %q", code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 2 || rows[1].Key != "beta" || len(rows[0].Candidates) != 3 || !strings.HasPrefix(rows[0].Hash, "0x") {
		t.Fatalf("json %v: %s", err, out)
	}
	code, out, errOut = runCLI(append(append(args, "--format", "csv"), keys...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || lines[0] != "key,hash,candidates" || !strings.HasPrefix(lines[1], "alpha,"+rows[0].Hash+",") {
		t.Fatalf("csv: code %d, stderr %q, out %q", code, errOut, out)
	}
	code, out, _ = runCLI(append(args, keys...)...)
	if code != 0 || !strings.Contains(out, rows[1].Hash) {
		t.Fatalf("table: %q", out)
	}
}

// CSV has the rows and figures the table has.
func TestCSVCarriesTheTable(t *testing.T) {
	one := &simRow{Rule: "one", Bins: 8, ShareAtLeast: []float64{1, 0.6, 0.3, 0.1, 0.02}, fluid: &fluid.Result{ShareAtLeast: []float64{1, 0.63, 0.26, 0.08, 0.019, 0.0037}}}
	two := &simRow{Rule: "goleft", Bins: 8, ShareAtLeast: []float64{1, 0.7, 0.2}, fluid: &fluid.Result{ShareAtLeast: []float64{1, 0.77, 0.22, 0.004}}}
	_, table := simShareRows([]*simRow{one, two}, false)
	_, long := simShareRows([]*simRow{one, two}, true)
	if len(long) != 2*len(table) {
		t.Fatalf("%d CSV rows for a table of %d rows and 2 rules", len(long), len(table))
	}
	// goleft's k = 3: "-" and the limit in the table, 0 and the limit in CSV.
	for _, l := range long {
		if l[0] == "goleft" && l[7] == "3" && (l[8] != "0" || l[9] != "0.004") {
			t.Errorf("goleft k = 3: %q", l)
		}
	}

	code, out, errOut := runCLI("fluid", "--rule", "dchoice,goleft", "--capacity", "4", "--format", "csv")
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := "rule,d,load,k,share_at_least,share_part_0,share_part_1,part_load_0,part_load_1,capacity,overflow,overflow_u_0.70,overflow_u_0.75,overflow_u_0.80,overflow_u_0.85,overflow_u_0.90,overflow_u_0.95"
	if lines[0] != want {
		t.Fatalf("header %q, want %q", lines[0], want)
	}
	_, tableOut, _ := runCLI("fluid", "--rule", "dchoice,goleft", "--capacity", "4")
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if f[9] != "4" || f[16] == "" {
			t.Errorf("row without the overflow figures: %s", l)
		}
		if f[0] == "goleft" && (f[5] == "" || f[7] == "") || f[0] == "dchoice" && f[5] != "" {
			t.Errorf("part columns: %s", l)
		}
		if v, _ := strconv.ParseFloat(f[16], 64); f[3] == "1" && !strings.Contains(tableOut, fmtOverflow(v)) {
			t.Errorf("overflow at u = 0.95 %s not in the table:\n%s", f[16], tableOut)
		}
	}
}

// A --plot that cannot be written (a full disk) fails the command and
// leaves the chart already there whole: it used to be truncated, then
// half written, an invalid SVG where a good one had been.
func TestPlotKeptOnFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := testutil.SmallTmpfs(t, "64k")
	chart := filepath.Join(dir, "shares.svg")
	if code, _, errOut := runCLI("fluid", "--plot", chart); code != 0 {
		t.Fatalf("fluid --plot: exit %d, %s", code, errOut)
	}
	old, err := os.ReadFile(chart)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "filler"), make([]byte, 1<<20), 0o644) // fills the disk, and fails
	code, _, errOut := runCLI("sim", "--log2", "10", "--runs", "2", "--quiet", "--plot", chart)
	if code != exitFail || !strings.Contains(errOut, "no space left") {
		t.Errorf("sim --plot on a full disk: exit %d, stderr %q", code, errOut)
	}
	if now, _ := os.ReadFile(chart); string(now) != string(old) {
		t.Errorf("the chart changed: %d bytes, were %d", len(now), len(old))
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
