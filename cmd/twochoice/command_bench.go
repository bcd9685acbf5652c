package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/corpus"
	"github.com/twochoice/twochoice/bench/measure"
	"github.com/twochoice/twochoice/bench/report"
	"github.com/twochoice/twochoice/internal/cli"
	"github.com/twochoice/twochoice/internal/plot"
	"github.com/twochoice/twochoice/store"
)

func init() {
	register(command{"bench", "compare twochoice with the caches Go programs use, on real or generated keys", runBench})
}

const benchSynopsis = `bench [flags]

Measures every cache on one workload, in the same run: the hit ratio at each
capacity (one goroutine replays the requests; a read that misses inserts
its key), the live heap per entry of a full cache, and, at each goroutine
count, requests per second over --duration with Get and Set latency
percentiles, the garbage collector's share of the CPU and allocations per
request. A request is a read (Get, and Set when it misses) or a write.

With no flags it compares the default caches on Zipf s = 1.0 over 1M keys
at capacities of 1% and 10% of the keys, on 1, 2 and GOMAXPROCS goroutines,
in well under a minute. Figures from one run on a busy machine are noisy:
to quote them, run several times and take medians.

Workloads: zipf and uniform (over --keys keys), scan (keys 0 … N-1 in
order, over and over), trace:FILE (an ARC or LIRS block trace), keys:FILE
(one key a line, or a TSV's first column: the keys load reads from the
file), weighted:FILE ("key<TAB>weight" lines, drawn in proportion to the
weights). Files may be compressed with zstd; FILE - is standard input.

Caches: CACHES; "all" for every one.
twochoice-goleft is twochoice's cache (store.NewCache, its default rule),
the one to compare with the others. The unbounded ones (map, syncmap and
twochoice-map, the twochoice store as a map) never evict: their hit ratio
is the ceiling, and their speed the baseline. Every hit-ratio table also
has a belady row at each capacity: Belady's offline optimum on the same
requests (a miss inserts its key, and the entry used farthest in the
future goes), which no cache that keeps every key set can beat. The table
ends with a verdict: twochoice's cache against the best other cache at
each capacity (the one with the highest hit ratio), in hit ratio, speed
and memory.

--corpus LIST replays a corpus instead: every bounded cache (twochoice,
the bounded go-left store, and otter, ristretto, lru, arc, 2q) and Belady's
optimum on each workload of LIST at each --capacity (default
1%,5%,10%,25% of each workload's distinct keys), a row per workload and
capacity with twochoice's margin over the best of the other caches, in
points, and a summary. LIST is comma-separated items:
  DIR          every trace in DIR and its subfolders (*.lis, *.trace,
               compressed with zstd or not; the format is told from the
               first line, as for trace:FILE)
  FILE         a trace; trace:FILE says so explicitly
  zipf:S       Zipf with exponent S over --keys keys: --requests requests
               counted after as many that warm the caches up (--seed)
  aging:S      the same law over --keys ranks counted back from the
               newest key, a new key born every 16 requests: popularity
               that moves, as a feed's or a news site's (capacities are
               shares of the keys it names)
  synthetic:K  a shape a fixed law lacks, over --keys keys, --requests
               counted after as many uncounted: drift (popularity that
               moves on), phases (working sets A, B, A, C), mixloop (a
               loop beside hot keys), zscan (table scans among hot keys),
               oneoffs (one-off keys among hot ones), uniform (a control);
               synthetic:all is every kind (capacities are shares of the
               keys it names)
The summary counts the rows within 0.5 point of the best peer (or ahead),
gives the mean margin and the worst row, and the gap closed:
sum(twochoice - best peer) / sum(belady - best peer) over the rows, the
share of the best peers' distance to Belady's optimum that twochoice
covers (0: level with them, 100%: at the optimum, negative: behind). A
replay that breaks a bound (a cache that keeps every key set above
belady, any cache above Belady's optimum with bypass, or one holding more
entries than its capacity) is a bug in the replay: it is printed as a
PROBLEM and the command exits 1. otter and ristretto draw seeds at
random, so their figures vary from run to run (on the small LIRS traces
by up to 6 and 18 points): --rounds N replays them N times per row and
reports the median. twochoice replays exactly, but its hash seed picks
the keys its policy samples, so another seed may give another figure:
--seeds N replays it under seeds 1 to N and reports the median.
--ranking NAME pins its eviction policy to one of its rankings, to see
what each does on the rows where the adaptive policy chooses (--policy
shows what it chose). --rankings replays it once more per ranking, pinned,
beside the adaptive policy, and prints per row the ranking that does best
and what the adaptive policy gives up to it: a row where that ranking
reaches the best peer and the adaptive policy does not is lost by the
choosing; one where none reaches it, by the rankings themselves (it
replays twochoice ten times as often: the report's corpus took 15
minutes with it, 5 without). --timeline N splits each row's counted
reads into N windows and prints every cache's hit ratio in each, the
pinned rankings' too with --rankings, and the window of each change of
twochoice's ranking or prior: whether the adaptive policy follows a
workload's phases, and what it pays before it moves (table and JSON).
--caches narrows or extends the caches (bounded ones, twochoice and one
other at least; "twochoice" is the bounded go-left store here); --plot
draws the margins; --format json gives the rows and the summary for
scripts.

--report DIR runs the README's comparisons instead (the corpus of traces
in the folder $TWOCHOICE_TRACES names, see docs/traces.md, the synthetic
shapes and Zipf keys; about 35 minutes on two cores) and writes
DIR/bench-results.md with its charts and DIR/bench-summary.md, the
README's table, which scripts/bench-report puts in the README.

Examples:
  twochoice bench
  twochoice bench --workload trace:traces/OLTP.lis.zst --capacity 1000,5000,15000 --plot oltp.svg
  twochoice bench --workload zipf --s 0.9 --caches otter,lru,map --threads 1,2,4 --format json
  twochoice bench --corpus traces,zipf:1.0 --plot margins.svg
  twochoice bench --corpus zipf:0.6,zipf:0.8,zipf:1.0,zipf:1.2 --capacity 1%,10% --format json`

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", strings.Replace(benchSynopsis, "CACHES", strings.Join(peerNames(), ", "), 1))
	var (
		wl        = fs.String("workload", "zipf", "zipf, uniform, scan, trace:FILE, keys:FILE or weighted:FILE (FILE - for standard input)")
		s         = fs.Float64("s", 1.0, "Zipf exponent (any s > 0)")
		keys      = fs.Uint64("keys", 1_000_000, "number of keys of zipf, uniform and scan")
		cacheList = fs.String("caches", strings.Join(measure.DefaultCaches(), ","), "caches to compare, comma-separated, each once, or \"all\"")
		capList   = fs.String("capacity", "1%,10%", "capacities: entries (at most the workload's distinct keys, and 2^24), or percentages of them, comma-separated, each once")
		thrList   = fs.String("threads", defaultThreads(), "goroutine counts of the timed runs, comma-separated, each once, 1 to 1024")
		duration  = fs.Duration("duration", 200*time.Millisecond, "timed part of each timed run")
		seed      = fs.Uint64("seed", 1, "seed of the generators: the same seed replays the same requests")
		plotFile  = fs.String("plot", "", "write hit ratio against capacity (with --corpus, the margins) to FILE.svg or FILE.png")
		reportDir = fs.String("report", "", "run the README's comparisons and write DIR/bench-results.md, its charts and DIR/bench-summary.md")
		corpusArg = fs.String("corpus", "", "replay a corpus: DIR, FILE, trace:FILE, zipf:S, aging:S and synthetic:K items, comma-separated (see above)")
		requests  = fs.Int("requests", corpus.DefaultRequests, "with --corpus: requests counted of each generated (zipf:S, aging:S, synthetic:K) workload, after as many uncounted")
		rounds    = fs.Int("rounds", 1, "with --corpus: replays of otter and ristretto per row, whose median is reported (they draw seeds at random)")
		seeds     = fs.Int("seeds", 1, "with --corpus: hash seeds twochoice is replayed under per row (1 to N), whose median is reported")
		ranking   = fs.String("ranking", "", "with --corpus: pin twochoice's eviction policy to one ranking ("+strings.Join(store.Rankings(), ", ")+") instead of letting it adapt")
		rankings  = fs.Bool("rankings", false, "with --corpus: also replay twochoice pinned to each ranking, and print each row's best ranking and what the adaptive policy gives up to it")
		policy    = fs.Bool("policy", false, "with --corpus: after the table, the setting twochoice's eviction policy ended each row on and its changes (JSON and CSV always carry them)")
		timeline  = fs.Int("timeline", 0, "with --corpus: split each row's counted reads into N windows and print every cache's hit ratio in each, and where twochoice's policy changed (table and JSON)")
		quiet     = fs.Bool("quiet", false, "no progress bar")
		format    = cli.Table
	)
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	bar := cli.NewProgress(stderr, "bench", *quiet)
	defer bar.Done()

	set := flagsGiven(fs)
	if set["requests"] && *corpusArg == "" {
		return fmt.Errorf("%w: --requests sizes the generated (zipf:S, aging:S, synthetic:K) workloads of --corpus", errUsage)
	}
	if set["rounds"] && *corpusArg == "" {
		return fmt.Errorf("%w: --rounds is for --corpus", errUsage)
	}
	if set["seeds"] && *corpusArg == "" {
		return fmt.Errorf("%w: --seeds is for --corpus", errUsage)
	}
	if set["ranking"] && *corpusArg == "" {
		return fmt.Errorf("%w: --ranking is for --corpus", errUsage)
	}
	if set["policy"] && *corpusArg == "" {
		return fmt.Errorf("%w: --policy is for --corpus", errUsage)
	}
	if set["rankings"] && *corpusArg == "" {
		return fmt.Errorf("%w: --rankings is for --corpus", errUsage)
	}
	if set["timeline"] && *corpusArg == "" {
		return fmt.Errorf("%w: --timeline is for --corpus", errUsage)
	}
	if *corpusArg != "" {
		return runCorpus(ctx, corpusFlags{
			list: *corpusArg, caches: *cacheList, capacities: *capList, keys: *keys, requests: *requests, rounds: *rounds, seeds: *seeds, seed: *seed,
			ranking: *ranking, rankings: *rankings, plot: *plotFile, format: format, policy: *policy, timeline: *timeline, set: set,
		}, bar, stdout, stderr)
	}
	if *reportDir != "" {
		var other []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name != "report" && f.Name != "seed" && f.Name != "quiet" {
				other = append(other, "--"+f.Name)
			}
		})
		if len(other) > 0 {
			return fmt.Errorf("%w: --report runs fixed comparisons; drop %s", errUsage, strings.Join(other, ", "))
		}
		return interrupted(ctx, report.Generate(ctx, report.Options{Dir: *reportDir, Seed: *seed, Progress: bar.Update, Log: stderr}))
	}

	spec, err := measure.ParseSpec(*wl, *s, *keys)
	if err != nil {
		return fmt.Errorf("%w: --workload: %v", errUsage, err)
	}
	// --s and --keys shape the generated workloads alone: given with
	// another, they would be dropped without a word, and the run would
	// not be the one asked for.
	switch {
	case set["s"] && spec.Kind != measure.Zipf:
		return fmt.Errorf("%w: --s is the exponent of the zipf workload; --workload %s has none", errUsage, *wl)
	case set["keys"] && spec.Kind != measure.Zipf && spec.Kind != measure.Uniform && spec.Kind != measure.Scan:
		return fmt.Errorf("%w: --keys counts the keys of zipf, uniform and scan; --workload %s takes its keys from the file", errUsage, *wl)
	}
	// A value listed twice in any of the lists is a usage error (see
	// cli.ParseList), as a rule listed twice is.
	capacities, err := cli.ParseList("capacity", *capList, measure.ParseCapacity)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	threads, err := cli.ParseList("threads", *thrList, parseThreads)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if top := slices.Max(threads); top > maxBenchThreads {
		return fmt.Errorf("%w: --threads %d: want at most %d", errUsage, top, maxBenchThreads)
	}
	slices.Sort(threads) // the timed runs go from the fewest goroutines up
	var names []string
	if *cacheList != "all" {
		// Unknown names are measure.Run's to refuse: it knows the caches.
		names, err = cli.ParseList("caches", *cacheList, func(n string) (string, error) { return n, nil })
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	if *duration < minBenchDuration {
		return fmt.Errorf("%w: --duration %v: want at least %v, or the timed runs measure little but the clock", errUsage, *duration, minBenchDuration)
	}
	res, err := measure.Run(ctx, measure.Config{
		Workload: spec, Seed: *seed, Caches: names, Capacities: capacities, Threads: threads,
		Duration: *duration, Progress: bar.Update, Warmup: benchWarmup,
	})
	bar.Done()
	if err != nil {
		if errors.Is(err, caches.ErrUnknown) || errors.Is(err, measure.ErrConfig) {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		return interrupted(ctx, err)
	}
	for _, m := range res.Merged {
		fmt.Fprintf(stderr, "note: --capacity %s come to the same %d entries of the workload's %d distinct keys: measured once\n", joinCapacities(m.Given), m.Entries, res.DistinctKeys)
	}
	for _, sk := range res.Skipped {
		fmt.Fprintf(stderr, "note: skipped %s at capacity %d: %v\n", sk.Cache, sk.Capacity, sk.Err)
	}
	return printThenPlot(func() error {
		switch format {
		case cli.JSON:
			return cli.WriteJSON(stdout, res.Rows)
		case cli.CSV:
			return report.WriteCSV(stdout, res.Rows)
		}
		return report.WriteTable(stdout, res)
	}, *plotFile, func() *plot.Chart { return report.HitRatioChart(res, "") })
}

// maxBenchThreads bounds --threads. Each goroutine replays its own stream
// of at least 2^16 requests (16 bytes each), so past 512 goroutines the
// streams outgrow the harness's 512 MiB budget: 1024 take 1 GiB, and 10^5
// took the machine. 1024 still oversubscribes 256 cores four times over.
const maxBenchThreads = 1024

// minBenchDuration is the shortest --duration: a timed run starts and
// stops its goroutines around the timed part, and in under a millisecond
// that overhead, not the cache, is what gets measured (at 1ns no request
// completes at all).
const minBenchDuration = time.Millisecond

// benchWarmup is Config.Warmup: 0, the default, but for tests, which
// shorten the replays of generated workloads to keep the suite fast.
var benchWarmup = 0

// peerNames lists every cache the harness knows.
func peerNames() []string {
	var names []string
	for _, p := range caches.Peers[uint64, measure.Value]() {
		names = append(names, p.Name)
	}
	return names
}

// defaultThreads is "1,2" and GOMAXPROCS if more.
func defaultThreads() string {
	t := []int{1, 2}
	if n := runtime.GOMAXPROCS(0); n > 2 {
		t = append(t, n)
	}
	s := make([]string, len(t))
	for i, v := range t {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

// parseThreads reads one goroutine count of --threads: a positive
// integer (maxBenchThreads bounds the largest, with its own message).
func parseThreads(s string) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		return 0, fmt.Errorf("%q is not a positive integer", s)
	}
	return v, nil
}

// joinCapacities lists capacities as they were given: "1% and 10000",
// "1%, 0.5% and 5000".
func joinCapacities(cs []measure.Capacity) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.String()
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
