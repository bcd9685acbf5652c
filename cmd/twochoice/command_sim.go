package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/twochoice/twochoice/bench/workload"
	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/bucket/fluid"
	"github.com/twochoice/twochoice/bucket/sim"
	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/cli"
	"github.com/twochoice/twochoice/internal/plot"
)

func init() {
	register(command{"sim", "simulate balls into bins under the placement rules", runSim})
}

const simSynopsis = `sim [flags]

Throws m = load·n balls into n bins under each rule, --runs times, and
prints the share of bins with load ≥ k (averaged over the runs) next to
the fluid limit, and how many runs reached each maximum load. With
--sweep A:B[:STEP] it does so for n = 2^A, 2^(A+STEP), … 2^B and prints the
runs with each maximum load per size and rule.

The levels engine (exact chain on load counts, n up to 2^40) runs one,
dchoice, halves and goleft with uniform candidates; the array engine (one
counter per bin, n up to 2^31) runs every rule, and key-driven runs
(--keys): keys hashed by --hash into the rule's candidates. Runs go in
parallel on all cores; the results depend on --seed alone.

--format json prints an array with one object per rule and size, even
for one rule and one size; --format csv one line per rule, size and k.

Examples:
  twochoice sim --rule dchoice,halves,goleft --log2 24
  twochoice sim --rule one,dchoice,halves,goleft --sweep 12:30:2
  twochoice sim --rule dchoice --keys seq --hash tabulation --log2 20
  twochoice sim --rule goleft --load 4 --plot shares.svg`

// simRow is one (rule, size) result, shaped as the documented JSON.
type simRow struct {
	Rule             string         `json:"rule"`
	D                int            `json:"d"`
	Bins             uint64         `json:"bins"`
	Balls            uint64         `json:"balls"`
	Runs             int            `json:"runs"`
	Seed             uint64         `json:"seed"`
	Engine           string         `json:"engine"`
	ShareAtLeast     []float64      `json:"share_at_least"`
	PartShareAtLeast [][]float64    `json:"part_share_at_least"`
	MaxLoadRuns      map[string]int `json:"max_load_runs"`
	NsPerBall        float64        `json:"ns_per_ball"`
	Seconds          float64        `json:"seconds"`
	// Keys and Hash name the key source (sim.Keys.Label: "product:K" with
	// the k of this size) and the hash family of a key-driven run; a run
	// with uniform candidates has neither.
	Keys string `json:"keys,omitempty"`
	Hash string `json:"hash,omitempty"`

	res      *sim.Result
	fluid    *fluid.Result
	keysFlag string // --keys as given: "product" whatever k each size picks
}

// load is the row's m/n.
func (r *simRow) load() float64 { return float64(r.Balls) / float64(r.Bins) }

// source says where a row's candidates came from, for the tables' titles.
func (r *simRow) source(label string) string {
	if r.Keys == "" {
		return "uniform candidates"
	}
	return fmt.Sprintf("keys %s hashed by %s", label, r.Hash)
}

func runSim(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sim", simSynopsis)
	var (
		ruleList = fs.String("rule", "one,dchoice,halves,goleft", "placement rules, comma-separated, each once: one, dchoice, halves, goleft, double")
		d        = fs.Int("d", 2, "number of choices (one choice always has 1)")
		log2     = fs.Int("log2", 20, "n = 2^log2 bins")
		bins     = fs.Uint64("bins", 0, "number of bins (instead of --log2)")
		load     = fs.Float64("load", 1, "balls per bin, m/n (any value > 0 up to 2^20); with a key file, all its keys when not given")
		runs     = fs.Int("runs", 0, "runs per rule and size, up to 2^24; 0: the published schedule (400 up to 2^20, down to 6 at 2^30, 2 beyond)")
		seed     = fs.Uint64("seed", 1, "seed: run r of a rule and size replays from (seed, r)")
		keysFlag = fs.String("keys", "", "key-driven runs: seq, random, product, product:K, or a key file (one key a line, or a TSV with the key first; Zstandard files decompressed; - for standard input)")
		sweep    = fs.String("sweep", "", "sizes A:B or A:B:STEP: n = 2^A … 2^B")
		plotFile = fs.String("plot", "", "write a chart of the shares to FILE.svg or FILE.png")
		quiet    = fs.Bool("quiet", false, "no progress bar")
		kind     = hashfn.XXHash
		engine   = sim.Auto
		format   = cli.Table
	)
	fs.Var(&kind, "hash", "hash family for --keys: xxhash, tabulation or siphash")
	fs.Var(&engine, "engine", "engine: auto, levels or array")
	fs.Var(&format, "format", "output: table, json or csv")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if err := checkPlot(*plotFile); err != nil {
		return err
	}
	set := flagsGiven(fs)
	rules, err := parseRules(*ruleList)
	if err != nil {
		return err
	}
	// sim.Config takes D = 0 for its default of 2: refuse it here, with
	// the library's bounds and message.
	if err := bucket.DChoice.CheckChoices(*d); err != nil {
		return fmt.Errorf("%w: --d: %v", errUsage, err)
	}
	if !(*load > 0) || math.IsInf(*load, 0) {
		return fmt.Errorf("%w: --load %v: want a number > 0", errUsage, *load)
	}
	if *runs < 0 {
		return fmt.Errorf("%w: --runs %d: want 0 (the published schedule) to %d", errUsage, *runs, sim.MaxRuns)
	}
	sizes, err := simSizes(*sweep, *log2, *bins, set)
	if err != nil {
		return err
	}
	// Ctrl-C is caught from here on: reading a big key file takes a while
	// too, and a Ctrl-C during it says "interrupted" like one during the
	// runs.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var keys *sim.Keys
	if *keysFlag != "" {
		// A key file is read as every command reads one (load, serve,
		// bench's keys:FILE): the same file, the same keys.
		keys, err = sim.ParseKeys(*keysFlag, func(p string) ([]string, error) { return readKeyFile(ctx, p, nil) })
		if err != nil {
			if strings.HasPrefix(*keysFlag, "product:") {
				return fmt.Errorf("%w: %v", errUsage, err)
			}
			return interrupted(ctx, err)
		}
		if keys.Kind == sim.FileKeys {
			// The output names the source: "stdin", not "-".
			keys.Name = workload.InputName(keys.Name)
		}
		if keys.Kind == sim.FileKeys && !set["load"] {
			*load = 0 // all the file's keys
		}
	}
	if set["hash"] && keys == nil {
		return fmt.Errorf("%w: --hash needs --keys", errUsage)
	}

	var cfgs []sim.Config
	var total atomic.Uint64
	for _, n := range sizes {
		for _, rule := range rules {
			c := sim.Config{Rule: rule, D: choices(rule, *d), Bins: n, Runs: *runs, Seed: *seed, Engine: engine, Keys: keys, Hash: kind}
			if *load > 0 {
				balls, err := simBalls(*load, n)
				if err != nil {
					return err
				}
				c.Balls = balls
			}
			if c.Runs == 0 {
				c.Runs = publishedRuns(n)
			}
			cfgs = append(cfgs, c)
		}
	}
	// A sweep pools the shares of its sizes, which means something only
	// when every size has the same load: not so for all of a key file's
	// keys at every size (no --load). The table then shows each size's
	// load and pools nothing; a plot, which pools, is refused.
	if *plotFile != "" && len(sizes) > 1 && !sameLoad(cfgs, func(c sim.Config) (uint64, uint64) { return cfgBalls(c, keys), c.Bins }) {
		return fmt.Errorf("%w: --plot pools the shares of the sizes of a sweep, but all the keys of %s at every size make a different load at each; give --load", errUsage, keys.Name)
	}
	// Check every (size, rule) before the first run: an error at the last
	// size of a sweep would otherwise come after all the others had run,
	// and throw their results away.
	for _, c := range cfgs {
		if err := c.Check(); err != nil {
			return simErr(err)
		}
	}
	bar := cli.NewProgress(stderr, "sim", *quiet)
	var work uint64
	for _, c := range cfgs {
		work += cfgBalls(c, keys) * uint64(c.Runs)
	}
	var rows []*simRow
	limits := map[fluid.Params]*fluid.Result{}
	for i, c := range cfgs {
		var before uint64 = total.Load()
		label := fmt.Sprintf("%d/%d %v 2^%.4g", i+1, len(cfgs), c.Rule, math.Log2(float64(c.Bins)))
		if bar.On() {
			// Only with a bar to draw: Run calls Progress after every run
			// (a few microseconds each at 2^12 bins), and without one the
			// Sprintf and Run's lock around the call are pure cost.
			c.Progress = func(p sim.Progress) {
				bar.Update(float64(before+p.BallsPlaced)/float64(work), fmt.Sprintf("%s run %d/%d", label, p.RunsDone, p.Runs))
			}
		}
		res, err := simRun(ctx, c)
		if err != nil {
			bar.Done()
			return interrupted(ctx, simErr(err))
		}
		total.Add(res.Config.Balls * uint64(res.Config.Runs))
		row, err := newSimRow(ctx, res, limits)
		if err != nil {
			bar.Done()
			return interrupted(ctx, err)
		}
		rows = append(rows, row)
	}
	bar.Done()
	if slices.ContainsFunc(rows, func(r *simRow) bool { return r.fluid == nil }) {
		fmt.Fprintf(stderr, "note: no fluid limit past a load of %d balls per bin (the solver would take hours); showing the simulation alone\n", fluid.MaxLoad)
	}

	sweeping := *sweep != ""
	return printThenPlot(func() error {
		switch format {
		case cli.JSON:
			// An array however many rows: one shape for scripts.
			return cli.WriteJSON(stdout, rows)
		case cli.CSV:
			header, table := simShareRows(rows, true)
			return cli.WriteCSV(stdout, header, table)
		}
		return simTable(stdout, rows, sweeping)
	}, *plotFile, func() *plot.Chart { return simChart(rows, len(sizes) > 1) })
}

// cfgBalls is the number of balls a run of c throws, before sim fills in
// its defaults: all the keys of a key file, or m = n.
func cfgBalls(c sim.Config, keys *sim.Keys) uint64 {
	switch {
	case c.Balls != 0:
		return c.Balls
	case keys != nil && keys.Kind == sim.FileKeys:
		return uint64(len(keys.Lines))
	}
	return c.Bins
}

// sameLoad reports whether every x has the same load m/n, m and n being
// what ballsBins says of it, up to the rounding of m = round(load·n): half
// a ball each way (so that --load 0.3 is one load at 2^10 bins, 307 balls,
// and at 2^12, 1229).
func sameLoad[T any](xs []T, ballsBins func(T) (m, n uint64)) bool {
	m0, n0 := ballsBins(xs[0])
	for _, x := range xs[1:] {
		m, n := ballsBins(x)
		if math.Abs(float64(m)/float64(n)-float64(m0)/float64(n0)) > (0.5/float64(n)+0.5/float64(n0))*(1+1e-9) {
			return false
		}
	}
	return true
}

// simErr is err as the command returns it: the simulation's refusals of its
// config come from the command line.
func simErr(err error) error {
	if errors.Is(err, sim.ErrConfig) || errors.Is(err, sim.ErrKeys) {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return err
}

// simRun runs one simulation: sim.Run, a variable so that a test can see
// whether any run started.
var simRun = sim.Run

// maxSimBalls is the most balls a run takes: 2^53, past which load·n is no
// longer an exact integer in a float64 (and a run would take years anyway).
const maxSimBalls = 1 << 53

// simBalls returns m = round(load·n), refusing a product that is not finite,
// rounds to no ball, or is above maxSimBalls: converting such a float64 to
// uint64 does not fail, it gives a meaningless count (2^63 for +Inf on
// amd64), and the run never ends.
func simBalls(load float64, n uint64) (uint64, error) {
	m := math.Round(load * float64(n))
	switch {
	case math.IsNaN(m) || math.IsInf(m, 0) || m > maxSimBalls:
		return 0, fmt.Errorf("%w: --load %v over %d bins asks for %.4g balls; at most 2^53 (%d) fit", errUsage, load, n, load*float64(n), uint64(maxSimBalls))
	case m < 1:
		return 0, fmt.Errorf("%w: --load %v leaves no ball in %d bins", errUsage, load, n)
	}
	return uint64(m), nil
}

// simSizes returns the bin counts to simulate.
func simSizes(sweep string, log2 int, bins uint64, set map[string]bool) ([]uint64, error) {
	if sweep == "" {
		if set["bins"] && set["log2"] {
			return nil, fmt.Errorf("%w: give --bins or --log2, not both", errUsage)
		}
		if set["bins"] {
			if bins == 0 {
				return nil, fmt.Errorf("%w: --bins 0: want at least 1 bin", errUsage)
			}
			return []uint64{bins}, nil
		}
		if log2 < 0 || log2 > 40 {
			return nil, fmt.Errorf("%w: --log2 %d: want 0 to 40", errUsage, log2)
		}
		return []uint64{1 << log2}, nil
	}
	if set["bins"] || set["log2"] {
		return nil, fmt.Errorf("%w: --sweep sets the sizes; drop --bins and --log2", errUsage)
	}
	parts := strings.Split(sweep, ":")
	var a, b, step int
	var err error
	step = 1
	if len(parts) < 2 || len(parts) > 3 {
		return nil, fmt.Errorf("%w: --sweep %q: want A:B or A:B:STEP", errUsage, sweep)
	}
	if a, err = strconv.Atoi(parts[0]); err == nil {
		if b, err = strconv.Atoi(parts[1]); err == nil && len(parts) == 3 {
			step, err = strconv.Atoi(parts[2])
		}
	}
	if err != nil || a < 0 || b > 40 || a > b || step < 1 {
		return nil, fmt.Errorf("%w: --sweep %q: want A:B[:STEP] with 0 ≤ A ≤ B ≤ 40 and STEP ≥ 1", errUsage, sweep)
	}
	var sizes []uint64
	for e := a; e <= b; e += step {
		sizes = append(sizes, 1<<e)
	}
	return sizes, nil
}

// publishedRuns is the number of runs per rule the published sweep made at
// n bins: 400 up to 2^20, then 200, 100, 40, 16 and 6 at 2^22 … 2^30
// (9,448 runs over the four rules and the even sizes 2^12 … 2^30), and 2
// past 2^30.
func publishedRuns(n uint64) int {
	switch {
	case n <= 1<<20:
		return 400
	case n <= 1<<22:
		return 200
	case n <= 1<<24:
		return 100
	case n <= 1<<26:
		return 40
	case n <= 1<<28:
		return 16
	case n <= 1<<30:
		return 6
	}
	return 2
}

// fluidSolve solves a fluid limit: fluid.SolveContext, a variable so that a
// test can count the solves.
var fluidSolve = fluid.SolveContext

// newSimRow shapes a result, with the fluid limit for the same rule and
// load, or none (fluid left nil) when the load is above fluid.MaxLoad.
// limits keeps the limits solved so far: the sizes of a sweep share theirs,
// and at high loads a solve takes seconds.
func newSimRow(ctx context.Context, res *sim.Result, limits map[fluid.Params]*fluid.Result) (*simRow, error) {
	c := res.Config
	row := &simRow{
		Rule: c.Rule.String(), D: c.D, Bins: c.Bins, Balls: c.Balls, Runs: c.Runs, Seed: c.Seed,
		Engine: c.Engine.String(), ShareAtLeast: res.ShareAtLeast(), PartShareAtLeast: res.PartShareAtLeast(),
		MaxLoadRuns: map[string]int{}, NsPerBall: round3(res.NsPerBall()), Seconds: round3(res.Wall.Seconds()), res: res,
	}
	if c.Keys != nil {
		row.Keys, row.Hash, row.keysFlag = c.Keys.Label(c.Balls), c.Hash.String(), c.Keys.Name
	}
	for l, n := range res.MaxLoadRuns() {
		row.MaxLoadRuns[strconv.Itoa(l)] = n
	}
	load := float64(c.Balls) / float64(c.Bins)
	if load > fluid.MaxLoad {
		return row, nil
	}
	p := fluid.Params{Placement: c.Rule, D: c.D, Load: load}
	fr := limits[p]
	if fr == nil {
		var err error
		if fr, err = fluidSolve(ctx, p); err != nil {
			return nil, err
		}
		limits[p] = fr
	}
	row.fluid = fr
	return row, nil
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// simShareRows lays the shares out as rows: with long = true one row per
// (rule, size, k) for CSV, else one row per k and a sim and a fluid column
// per rule for the table (rows must then share one size).
func simShareRows(rows []*simRow, long bool) ([]string, [][]string) {
	if long {
		header := []string{"rule", "d", "bins", "balls", "runs", "seed", "engine", "k", "share_sim", "share_fluid", "max_load_runs", "keys", "hash"}
		// As many k per size as the table has: up to one past the
		// largest load any rule reached, where the limit still shows.
		top := map[uint64]int{}
		for _, r := range rows {
			top[r.Bins] = max(top[r.Bins], len(r.ShareAtLeast), 1)
		}
		var out [][]string
		for _, r := range rows {
			for k := 1; k <= top[r.Bins]; k++ {
				ml := ""
				if k == 1 {
					ml = fmtMaxLoadCounts(r.MaxLoadRuns)
				}
				out = append(out, []string{r.Rule, strconv.Itoa(r.D), strconv.FormatUint(r.Bins, 10), strconv.FormatUint(r.Balls, 10),
					strconv.Itoa(r.Runs), strconv.FormatUint(r.Seed, 10), r.Engine, strconv.Itoa(k),
					strconv.FormatFloat(at(r.ShareAtLeast, k), 'g', -1, 64), limitCSV(r.fluid, k), ml, r.Keys, r.Hash})
			}
		}
		return header, out
	}
	header := []string{"load ≥ k"}
	top := 1
	for _, r := range rows {
		header = append(header, r.Rule+" sim", r.Rule+" fluid")
		top = max(top, len(r.ShareAtLeast))
	}
	var out [][]string
	for k := 1; k <= top; k++ {
		line := []string{strconv.Itoa(k)}
		for _, r := range rows {
			s := "-"
			if k < len(r.ShareAtLeast) {
				s = fmtShare(r.ShareAtLeast[k])
			}
			f := "-"
			if r.fluid != nil {
				f = fmtLimit(at(r.fluid.ShareAtLeast, k))
			}
			line = append(line, s, f)
		}
		out = append(out, line)
	}
	return header, out
}

// limitCSV is the CSV cell of the limit's share at k: empty without a limit.
func limitCSV(fr *fluid.Result, k int) string {
	if fr == nil {
		return ""
	}
	return strconv.FormatFloat(at(fr.ShareAtLeast, k), 'g', 6, 64)
}

func at(s []float64, k int) float64 {
	if k < len(s) {
		return s[k]
	}
	return 0
}

// fmtMaxLoads prints "3:65% 4:35%", the table's share of runs at each
// maximum load.
func fmtMaxLoads(m map[string]int, runs int) string {
	return joinMaxLoads(m, func(n int) string { return pct(n, runs) })
}

// fmtMaxLoadCounts prints "3:13 4:7", the runs at each maximum load, for
// the CSV's max_load_runs: the counts of the JSON field of that name.
func fmtMaxLoadCounts(m map[string]int) string {
	return joinMaxLoads(m, strconv.Itoa)
}

func joinMaxLoads(m map[string]int, value func(runs int) string) string {
	var loads []int
	for l := range m {
		v, _ := strconv.Atoi(l)
		loads = append(loads, v)
	}
	slices.Sort(loads)
	var parts []string
	for _, l := range loads {
		parts = append(parts, fmt.Sprintf("%d:%s", l, value(m[strconv.Itoa(l)])))
	}
	return strings.Join(parts, " ")
}

func pct(n, of int) string {
	p := 100 * float64(n) / float64(of)
	if p == math.Trunc(p) {
		return fmt.Sprintf("%.0f%%", p)
	}
	return fmt.Sprintf("%.3g%%", p)
}

// simTable prints the human tables.
func simTable(w io.Writer, rows []*simRow, sweeping bool) error {
	if sweeping {
		return simSweepTable(w, rows)
	}
	r0 := rows[0]
	fmt.Fprintf(w, "n = %d bins, m = %d balls (%.4g per bin), seed %d, %s\n", r0.Bins, r0.Balls, r0.load(), r0.Seed, r0.source(r0.Keys))
	fmt.Fprintf(w, "share of bins with load ≥ k: sim is the mean over the runs, fluid the limit as n → ∞\n\n")
	header, table := simShareRows(rows, false)
	if err := cli.WriteTable(w, header, table); err != nil {
		return err
	}
	fmt.Fprintln(w)
	var stat [][]string
	for _, r := range rows {
		stat = append(stat, []string{r.Rule, strconv.Itoa(r.D), r.Engine, strconv.Itoa(r.Runs), fmtMaxLoads(r.MaxLoadRuns, r.Runs),
			fmt.Sprintf("%.2f", r.NsPerBall), fmt.Sprintf("%.2f", r.Seconds)})
	}
	return cli.WriteTable(w, []string{"rule", "d", "engine", "runs", "max load: share of runs", "ns/ball", "seconds"}, stat)
}

// simSweepTable prints, per size, the runs with each maximum load under
// each rule, then the shares pooled over all sizes next to the limit.
func simSweepTable(w io.Writer, rows []*simRow) error {
	var rules []string
	bySize := map[uint64]map[string]*simRow{}
	var sizes []uint64
	for _, r := range rows {
		if !slices.Contains(rules, r.Rule) {
			rules = append(rules, r.Rule)
		}
		if bySize[r.Bins] == nil {
			bySize[r.Bins] = map[string]*simRow{}
			sizes = append(sizes, r.Bins)
		}
		bySize[r.Bins][r.Rule] = r
	}
	// All of a key file's keys at every size: a load per size, and no
	// pooling of shares across loads.
	pool := sameLoad(rows, func(r *simRow) (uint64, uint64) { return r.Balls, r.Bins })
	load := (*simRow).load
	if pool {
		// The load of the largest size, whose limit the pooled table
		// shows: m = round(load·n) strays from the load asked by up to
		// half a ball per bin at the smallest sizes (3 balls in 2 bins
		// for --load 1.3), and least at the largest.
		fmt.Fprintf(w, "runs with each maximum load, per size and rule (m = %.4g·n, seed %d, %s)\n\n", load(rows[len(rows)-1]), rows[0].Seed, rows[0].source(rows[0].keysFlag))
	} else {
		fmt.Fprintf(w, "runs with each maximum load, per size and rule (m = %d balls at every size, seed %d, %s)\n\n", rows[0].Balls, rows[0].Seed, rows[0].source(rows[0].keysFlag))
	}
	header := []string{"bins"}
	if !pool {
		header = append(header, "balls/bin")
	}
	header = append(header, "runs")
	header = append(header, rules...)
	header = append(header, "seconds")
	var table [][]string
	var wall float64
	for _, n := range sizes {
		line := []string{fmtBins(n)}
		if !pool {
			line = append(line, fmt.Sprintf("%.4g", load(bySize[n][rules[0]])))
		}
		runsCol := len(line)
		line = append(line, "")
		secs := 0.0
		for _, rule := range rules {
			r := bySize[n][rule]
			if r == nil {
				line = append(line, "")
				continue
			}
			line[runsCol] = strconv.Itoa(r.Runs)
			line = append(line, fmtMaxLoads(r.MaxLoadRuns, r.Runs))
			secs += r.Seconds
		}
		wall += secs
		table = append(table, append(line, fmt.Sprintf("%.1f", secs)))
	}
	if err := cli.WriteTable(w, header, table); err != nil {
		return err
	}
	if !pool {
		fmt.Fprintf(w, "\nthe load differs from size to size, so the shares are not pooled: --format csv gives each size's next to its limit\n")
		fmt.Fprintf(w, "\n%.1f s of simulation\n", wall)
		return nil
	}
	// Shares pooled over every run of every size, weighted by bins.
	var pooled []*simRow
	for _, rule := range rules {
		var h *bucket.Histogram
		var last *simRow
		for _, n := range sizes {
			if r := bySize[n][rule]; r != nil {
				if h == nil {
					h = r.res.Hist.Clone()
				} else {
					h.Merge(r.res.Hist)
				}
				last = r
			}
		}
		p := *last
		p.ShareAtLeast = h.ShareAtLeast()
		pooled = append(pooled, &p)
	}
	fmt.Fprintf(w, "\nshare of bins with load ≥ k over all sizes and runs, next to the fluid limit\n\n")
	header, table = simShareRows(pooled, false)
	if err := cli.WriteTable(w, header, table); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%.1f s of simulation\n", wall)
	return nil
}

func fmtBins(n uint64) string {
	if n&(n-1) == 0 {
		return fmt.Sprintf("2^%d", 63-leadingZeros(n))
	}
	return strconv.FormatUint(n, 10)
}

func leadingZeros(n uint64) int {
	z := 0
	for n&(1<<63) == 0 {
		n <<= 1
		z++
	}
	return z
}

// simChart draws the shares (pooled over sizes when there are several) as
// points and the fluid limit as lines, one colour per rule. Pooled, the
// title's load and each rule's limit are those of the largest size, as in
// the sweep's table (simSweepTable).
func simChart(rows []*simRow, pooled bool) *plot.Chart {
	r0, rl := rows[0], rows[len(rows)-1]
	title := fmt.Sprintf("n = %s, m = %.4g·n", fmtBins(r0.Bins), r0.load())
	if pooled {
		title = fmt.Sprintf("n = %s to %s, m = %.4g·n", fmtBins(r0.Bins), fmtBins(rl.Bins), rl.load())
	}
	c := &plot.Chart{Title: title, XLabel: "load k", YLabel: "share of bins with load ≥ k", LogY: true}
	seen := map[string]int{}
	for _, r := range rows {
		if _, ok := seen[r.Rule]; ok {
			continue
		}
		seen[r.Rule] = len(seen)
		h := r.res.Hist.Clone()
		last := r // the rule's row at the largest size
		for _, o := range rows {
			if o != r && o.Rule == r.Rule {
				h.Merge(o.res.Hist)
				last = o
			}
		}
		col := plot.Palette[seen[r.Rule]%len(plot.Palette)]
		simS := h.ShareAtLeast()
		c.Series = append(c.Series, plot.Series{Name: r.Rule + " sim", X: ks(len(simS)), Y: simS, Style: plot.Points, Color: col})
		if last.fluid == nil {
			continue
		}
		fl := last.fluid.ShareAtLeast
		// The limit two levels past the simulation (or down to 1e-300):
		// far enough to show where the tail goes, near enough that the
		// axis still separates the simulated points.
		n := min(len(fl), len(simS)+2)
		c.Series = append(c.Series, plot.Series{Name: r.Rule + " fluid", X: ks(n), Y: fl[:n], Style: plot.Line, Color: col})
	}
	return c
}

func ks(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i)
	}
	return x
}
