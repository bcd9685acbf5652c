package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/bucket/fluid"
	"github.com/twochoice/twochoice/bucket/sim"
)

func TestSimTable(t *testing.T) {
	code, out, errOut := runCLI("sim", "--log2", "14", "--runs", "4", "--quiet")
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"one sim", "dchoice fluid", "halves sim", "goleft fluid", "0.761594", "0.771675", "max load"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if errOut != "" {
		t.Errorf("stderr not empty with --quiet and no terminal: %q", errOut)
	}
}

// The JSON row (an array of one, for one rule) has exactly the keys the
// issue fixes.
func TestSimJSON(t *testing.T) {
	code, out, errOut := runCLI("sim", "--rule", "goleft", "--log2", "12", "--runs", "3", "--seed", "5", "--format", "json")
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	obj := oneJSONRow(t, out)
	var keys []string
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"balls", "bins", "d", "engine", "max_load_runs", "ns_per_ball", "part_share_at_least", "rule", "runs", "seconds", "seed", "share_at_least"}
	if !slices.Equal(keys, want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	if obj["rule"] != "goleft" || obj["bins"] != float64(4096) || obj["runs"] != float64(3) || obj["engine"] != "levels" {
		t.Fatalf("object %v", obj)
	}
	if p := obj["part_share_at_least"].([]any); len(p) != 2 {
		t.Fatalf("%d parts", len(p))
	}
	total := 0.0
	for _, v := range obj["max_load_runs"].(map[string]any) {
		total += v.(float64)
	}
	if total != 3 {
		t.Fatalf("max_load_runs counts %v runs", total)
	}
	// The same seed gives the same shares.
	_, again, _ := runCLI("sim", "--rule", "goleft", "--log2", "12", "--runs", "3", "--seed", "5", "--format", "json")
	obj2 := oneJSONRow(t, again)
	if a, b := obj["share_at_least"], obj2["share_at_least"]; !equalJSON(a, b) {
		t.Fatalf("seed 5 twice: %v and %v", a, b)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestSimSweep(t *testing.T) {
	code, out, errOut := runCLI("sim", "--rule", "dchoice,goleft", "--sweep", "10:14:2", "--runs", "5", "--format", "json")
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 6 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	code, out, _ = runCLI("sim", "--rule", "dchoice,goleft", "--sweep", "10:12", "--runs", "5")
	if code != 0 || !strings.Contains(out, "2^11") || !strings.Contains(out, "runs with each maximum load") || !strings.Contains(out, "over all sizes") {
		t.Fatalf("sweep table, code %d:\n%s", code, out)
	}
	code, out, _ = runCLI("sim", "--rule", "double", "--log2", "12", "--runs", "2", "--format", "csv")
	if code != 0 || !strings.HasPrefix(out, "rule,d,bins,balls,runs,seed,engine,k,share_sim,share_fluid,max_load_runs,keys,hash\ndouble,2,4096,4096,2,1,array,1,") {
		t.Fatalf("csv, code %d:\n%s", code, out)
	}
}

func TestSimKeysAndPlot(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.txt")
	var b strings.Builder
	for i := range 3000 {
		b.WriteString("key-")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(strings.Repeat("y", i/26))
		b.WriteString("\n")
	}
	if err := os.WriteFile(keys, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	svg, png := filepath.Join(dir, "s.svg"), filepath.Join(dir, "s.png")
	code, out, errOut := runCLI("sim", "--rule", "dchoice", "--bins", "1024", "--keys", keys, "--hash", "tabulation", "--runs", "2", "--plot", svg, "--format", "json")
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	if obj := oneJSONRow(t, out); obj["balls"] != float64(3000) || obj["engine"] != "array" {
		t.Fatalf("%v", obj)
	}
	if fi, err := os.Stat(svg); err != nil || fi.Size() == 0 {
		t.Fatalf("svg: %v", err)
	}
	for _, k := range []string{"seq", "random", "product", "product:6"} {
		if code, _, errOut := runCLI("sim", "--rule", "goleft", "--log2", "12", "--keys", k, "--runs", "1", "--plot", png); code != 0 {
			t.Fatalf("--keys %s: code %d, %q", k, code, errOut)
		}
	}
	if fi, err := os.Stat(png); err != nil || fi.Size() == 0 {
		t.Fatalf("png: %v", err)
	}
}

func TestSimErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--rule", "nosuch"},
		{"--bins", "100", "--log2", "10"},
		{"--sweep", "12"},
		{"--sweep", "14:12"},
		{"--sweep", "10:12", "--log2", "10"},
		{"--hash", "tabulation"},
		{"--rule", "double", "--engine", "levels", "--log2", "10"},
		{"--rule", "dchoice", "--log2", "32", "--engine", "array"},
		{"--load", "-1"},
		{"--load", "0.0000001", "--log2", "4"},
		{"--runs", "-2"},
		{"--format", "xml"},
		{"--rule", "dchoice", "--d", "9"},
		{"--keys", "product:1"},
		{"extra"},
	} {
		if code, _, errOut := runCLI(append([]string{"sim"}, args...)...); code != exitUsage {
			t.Errorf("sim %v: code %d, want %d (stderr %q)", args, code, exitUsage, errOut)
		}
	}
	if code, _, errOut := runCLI("sim", "--keys", filepath.Join(t.TempDir(), "missing"), "--log2", "10"); code != exitFail || !strings.Contains(errOut, "missing") {
		t.Errorf("missing key file: code %d, %q", code, errOut)
	}
	if code, _, _ := runCLI("sim", "--log2", "10", "--runs", "1", "--plot", filepath.Join(t.TempDir(), "x.gif")); code != exitUsage {
		t.Errorf("plot to .gif: code %d, want a usage error", code)
	}
}

func TestPublishedRuns(t *testing.T) {
	// The published sweep: 4 rules over the even sizes 2^12 … 2^30 made
	// 9,448 runs.
	total := 0
	for e := 12; e <= 30; e += 2 {
		total += 4 * publishedRuns(1<<e)
	}
	if total != 9448 {
		t.Fatalf("%d runs, want 9448", total)
	}
}

// A fluid share under the solver's floor shows as "<1e-300" in the table,
// not as 0: the limit is not zero there, only too small to report.
func TestSimTableBelowFloor(t *testing.T) {
	row := &simRow{Rule: "goleft", ShareAtLeast: []float64{1, 0.77, 0.22, 0.004}, fluid: &fluid.Result{ShareAtLeast: []float64{1, 0.77, 0.22}}}
	_, lines := simShareRows([]*simRow{row}, false)
	if got := lines[2]; got[1] != fmtShare(0.004) || got[2] != "<1e-300" {
		t.Fatalf("row k = 3: %q, want the sim share and <1e-300", got)
	}
	if got := lines[1][2]; got != fmtShare(0.22) {
		t.Fatalf("row k = 2: fluid %q", got)
	}
	// CSV keeps the number.
	_, long := simShareRows([]*simRow{row}, true)
	if got := long[2][9]; got != "0" {
		t.Fatalf("csv share_fluid at k = 3: %q, want 0", got)
	}
}

// Every (size, rule) of a command line is checked before the first run:
// a sweep whose last size cannot run (more balls than the key file has
// keys, more bins than the engine takes) is refused up front, instead of
// after minutes of runs whose results the error then threw away.
func TestSimChecksEveryConfigFirst(t *testing.T) {
	keys := writeTestFile(t, t.TempDir(), "keys.txt", []byte(strings.Repeat("k\n", 100)))
	runs := 0
	defer func(f func(context.Context, sim.Config) (*sim.Result, error)) { simRun = f }(simRun)
	simRun = func(ctx context.Context, c sim.Config) (*sim.Result, error) {
		runs++
		return sim.Run(ctx, c)
	}
	for _, args := range [][]string{
		{"--keys", keys, "--load", "1", "--sweep", "2:10", "--rule", "dchoice"},
		{"--sweep", "12:32:20", "--rule", "dchoice", "--engine", "array", "--runs", "1"},
		{"--bins", "1000", "--rule", "dchoice,double"},
	} {
		runs = 0
		code, _, errOut := runCLI(append([]string{"sim", "--quiet"}, args...)...)
		if code != exitUsage || runs != 0 {
			t.Errorf("sim %v: code %d after %d runs, want %d before any (stderr %q)", args, code, runs, exitUsage, errOut)
		}
	}
}

// Ctrl-C stops sim and fluid as it stops bench and load: exit status 1 and
// one line saying so, not "context canceled".
func TestSimAndFluidInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command as a process of its own")
	}
	for _, args := range [][]string{
		{"sim", "--log2", "26", "--rule", "dchoice", "--engine", "array", "--runs", "16", "--quiet"},
		{"fluid", "--rule", "goleft", "--d", "8", "--load", "100"},
	} {
		interruptCommand(t, args[0], args, waitFor(500*time.Millisecond))
	}
}

// A sweep over a key file without --load throws all the file's keys at
// every size: the load differs from size to size, so the table must not
// print one "m = c·n" for all of them, nor pool the shares of different
// loads against the limit of one of them; a plot, which pools, is refused
// before any run.
func TestSimSweepOverKeyFile(t *testing.T) {
	keys := writeTestFile(t, t.TempDir(), "keys.txt", []byte(strings.Repeat("k\n", 1000)))
	code, out, errOut := runCLI("sim", "--quiet", "--keys", keys, "--sweep", "4:6", "--rule", "dchoice", "--runs", "1")
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	if strings.Contains(out, "m = 62.5·n") || strings.Contains(out, "next to the fluid limit") {
		t.Errorf("the table pools or labels sizes of different loads as one:\n%s", out)
	}
	for _, want := range []string{"1000 balls", "62.5", "15.62"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	runs := 0
	defer func(f func(context.Context, sim.Config) (*sim.Result, error)) { simRun = f }(simRun)
	simRun = func(ctx context.Context, c sim.Config) (*sim.Result, error) {
		runs++
		return sim.Run(ctx, c)
	}
	svg := filepath.Join(t.TempDir(), "x.svg")
	code, _, errOut = runCLI("sim", "--quiet", "--keys", keys, "--sweep", "4:6", "--rule", "dchoice", "--runs", "1", "--plot", svg)
	if code != exitUsage || runs != 0 || !strings.Contains(errOut, "--load") {
		t.Errorf("plot of a sweep of different loads: code %d after %d runs, stderr %q", code, runs, errOut)
	}
	// A load whose ball count rounds differently at each size (0.3·2^10 =
	// 307.2) is still one load: pooled.
	code, out, errOut = runCLI("sim", "--quiet", "--load", "0.3", "--sweep", "10:12", "--rule", "dchoice", "--runs", "1")
	if code != 0 || strings.Contains(out, "balls/bin") || !strings.Contains(out, "next to the fluid limit") {
		t.Errorf("sweep at load 0.3: code %d, stderr %q:\n%s", code, errOut, out)
	}
	// With --load every size has the same load: pooled as before.
	code, out, errOut = runCLI("sim", "--quiet", "--keys", keys, "--load", "1", "--sweep", "4:6", "--rule", "dchoice", "--runs", "1")
	if code != 0 || !strings.Contains(out, "m = 1·n") || !strings.Contains(out, "next to the fluid limit") {
		t.Errorf("sweep with --load: code %d, stderr %q:\n%s", code, errOut, out)
	}
}

// A sweep solves each rule's fluid limit once, not once per size: every
// size of a sweep at m = c·n has the same limit, and at high loads a solve
// takes seconds (one choice at load 300: about 6 s, for a run of
// milliseconds).
func TestSimSweepSolvesTheLimitOnce(t *testing.T) {
	solves := 0
	defer func(f func(context.Context, fluid.Params) (*fluid.Result, error)) { fluidSolve = f }(fluidSolve)
	fluidSolve = func(ctx context.Context, p fluid.Params) (*fluid.Result, error) {
		solves++
		return fluid.SolveContext(ctx, p)
	}
	code, _, errOut := runCLI("sim", "--quiet", "--sweep", "4:8", "--rule", "dchoice,goleft", "--runs", "2")
	if code != 0 || solves != 2 {
		t.Errorf("code %d after %d solves, want 2 (stderr %q)", code, solves, errOut)
	}
}

// --help says what --load defaults to with a key file: all its keys, not
// one per bin.
func TestSimHelpLoadWithKeyFile(t *testing.T) {
	code, out, _ := runCLI("sim", "--help")
	if code != 0 || !strings.Contains(out, "with a key file, all its keys") {
		t.Errorf("code %d; --help does not say --load's default with a key file:\n%s", code, out)
	}
}

// A key-driven run's output names its key source and hash family in every
// format: without them the numbers cannot be told apart from a uniform
// run's, nor replayed (the same --seed under --hash xxhash gives other
// numbers). The product set is named with the k its size used.
func TestSimRecordsKeySource(t *testing.T) {
	args := []string{"sim", "--rule", "goleft", "--log2", "12", "--runs", "1", "--keys", "product", "--hash", "tabulation", "--quiet"}
	code, out, errOut := runCLI(append(args, "--format", "json")...)
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	obj := oneJSONRow(t, out)
	if obj["keys"] != "product:3" || obj["hash"] != "tabulation" {
		t.Errorf("json: keys %v, hash %v; want product:3 (3^8 ≥ 4096 keys) and tabulation", obj["keys"], obj["hash"])
	}
	code, out, _ = runCLI(append(args, "--format", "csv")...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || !strings.HasSuffix(lines[0], ",keys,hash") || !strings.HasSuffix(lines[1], ",product:3,tabulation") {
		t.Errorf("csv, code %d:\n%s", code, out)
	}
	code, out, _ = runCLI(args...)
	if code != 0 || !strings.Contains(out, "keys product:3 hashed by tabulation") {
		t.Errorf("table, code %d:\n%s", code, out)
	}
	code, out, _ = runCLI("sim", "--rule", "dchoice", "--sweep", "10:12:2", "--runs", "1", "--keys", "seq", "--quiet")
	if code != 0 || !strings.Contains(out, "keys seq hashed by xxhash") {
		t.Errorf("sweep table, code %d:\n%s", code, out)
	}
	// Uniform runs keep the documented JSON fields (TestSimJSON) and say so
	// in the table.
	code, out, _ = runCLI("sim", "--rule", "dchoice", "--log2", "10", "--runs", "1", "--quiet")
	if code != 0 || !strings.Contains(out, "uniform candidates") {
		t.Errorf("uniform table, code %d:\n%s", code, out)
	}
}

// The CSV's max_load_runs column holds what the JSON field of that name
// holds: how many runs had each maximum load, as counts ("2:3 3:4"), not
// the table's percentages, which at three digits cannot give the counts
// back once there are more than a thousand runs.
func TestSimCSVMaxLoadRuns(t *testing.T) {
	row := &simRow{Rule: "goleft", Runs: 1 << 24, ShareAtLeast: []float64{1, 0.77, 0.22, 0.004},
		MaxLoadRuns: map[string]int{"3": 1234567, "4": 1<<24 - 1234567}}
	header, lines := simShareRows([]*simRow{row}, true)
	col := slices.Index(header, "max_load_runs")
	if got, want := lines[0][col], "3:1234567 4:15542649"; got != want {
		t.Errorf("max_load_runs %q, want %q", got, want)
	}
	args := []string{"sim", "--rule", "goleft", "--log2", "8", "--runs", "9", "--quiet"}
	_, js, _ := runCLI(append(args, "--format", "json")...)
	var rows []struct {
		MaxLoadRuns map[string]int `json:"max_load_runs"`
	}
	if err := json.Unmarshal([]byte(js), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	obj := rows[0]
	_, csv, _ := runCLI(append(args, "--format", "csv")...)
	first := strings.Split(strings.Split(csv, "\n")[1], ",")[col]
	var loads []int
	for l := range obj.MaxLoadRuns {
		v, _ := strconv.Atoi(l)
		loads = append(loads, v)
	}
	slices.Sort(loads)
	var parts []string
	for _, l := range loads {
		parts = append(parts, fmt.Sprintf("%d:%d", l, obj.MaxLoadRuns[strconv.Itoa(l)]))
	}
	if want := strings.Join(parts, " "); first != want || len(loads) < 2 {
		t.Errorf("csv max_load_runs %q, json %v", first, obj.MaxLoadRuns)
	}
}

// A refused number says what would have been taken, not only which flag.
func TestSimFluidRefusalsSayWhatIsWanted(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--runs", "-1"}, "--runs -1: want 0 (the published schedule) to 16777216"},
		{[]string{"sim", "--bins", "0"}, "--bins 0: want at least 1 bin"},
		{[]string{"fluid", "--capacity", "-1"}, "--capacity -1: want 0 (unbounded bins) or more"},
	} {
		code, _, errOut := runCLI(c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: code %d, stderr %q; want %d and %q", c.args, code, errOut, exitUsage, c.want)
		}
	}
}

// --load 1.3 over a sweep from 2 bins throws round(2.6) = 3 balls into 2
// (1.5 per bin) and 1331 into 1024 (1.2998): close enough to pool, but
// the pooled table's limit is the largest size's, and its header and the
// chart's title and limit must be of that same load, not the smallest
// size's ("m = 1.5·n" over a table of the limit at 1.3, or a chart whose
// line is the limit at 1.5, 0.777 at k = 1 for one choice, beside the
// table's 0.727).
func TestSimSweepPooledLoadIsTheLargestSizes(t *testing.T) {
	code, out, errOut := runCLI("sim", "--quiet", "--sweep", "1:10:9", "--load", "1.3", "--rule", "one", "--runs", "2")
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "(m = 1.3·n,") || !strings.Contains(out, fmtShare(1-math.Exp(-1331.0/1024))) {
		t.Errorf("pooled sweep table: want m = 1.3·n and the limit at 1331/1024 (%s):\n%s", fmtShare(1-math.Exp(-1331.0/1024)), out)
	}
	limits := map[fluid.Params]*fluid.Result{}
	var rows []*simRow
	for _, n := range []uint64{2, 1024} {
		balls, err := simBalls(1.3, n)
		if err != nil {
			t.Fatal(err)
		}
		res, err := sim.Run(context.Background(), sim.Config{Rule: bucket.OneChoice, Bins: n, Balls: balls, Runs: 2, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		row, err := newSimRow(context.Background(), res, limits)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	c := simChart(rows, true)
	if !strings.Contains(c.Title, "m = 1.3·n") {
		t.Errorf("chart title %q, want m = 1.3·n", c.Title)
	}
	for _, s := range c.Series {
		if s.Name == "one fluid" && s.Y[1] != rows[1].fluid.ShareAtLeast[1] {
			t.Errorf("chart's limit at k = 1 is %v, the table's (largest size's) %v", s.Y[1], rows[1].fluid.ShareAtLeast[1])
		}
	}
}

// --help gave --load as "any value > 0", but sim refuses a mean load past
// sim.MaxMeanLoad (2^20): the help says so, and the bound holds.
func TestSimHelpLoadBound(t *testing.T) {
	code, out, _ := runCLI("sim", "--help")
	if code != 0 || !strings.Contains(out, "any value > 0 up to 2^20") || sim.MaxMeanLoad != 1<<20 {
		t.Errorf("code %d; --help does not give --load's bound 2^20 (sim.MaxMeanLoad %d):\n%s", code, sim.MaxMeanLoad, out)
	}
	if code, _, errOut := runCLI("sim", "--quiet", "--bins", "1", "--rule", "one", "--runs", "1", "--load", strconv.Itoa(sim.MaxMeanLoad+1)); code != exitUsage {
		t.Errorf("--load 2^20+1: code %d, want a usage error (%q)", code, errOut)
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
