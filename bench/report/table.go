package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/twochoice/twochoice/bench/measure"
	"github.com/twochoice/twochoice/internal/cli"
)

// WriteTable prints a run's results for people: what ran, a table of hit
// ratio and memory per cache and capacity, a table of the timed runs,
// twochoice's load reports, and last the verdict: twochoice's cache
// against the best other cache at each capacity.
func WriteTable(w io.Writer, res *measure.Result) error {
	c := res.Config
	fmt.Fprintf(w, "workload %s, %d distinct keys (replay with --seed %d)\n", res.Workload, res.DistinctKeys, c.Seed)
	fmt.Fprintf(w, "machine  %s\n\n", res.Machine)

	if c.Measures&(measure.MeasureHitRatio|measure.MeasureMemory) != 0 {
		if err := writeCapacityTable(w, res); err != nil {
			return err
		}
	}
	if c.Measures&measure.MeasureThroughput != 0 {
		if err := writeThroughputTable(w, res); err != nil {
			return err
		}
	}
	writeLoads(w, res)
	if vs := Verdicts(res); len(vs) > 0 {
		fmt.Fprintln(w)
		writeVerdict(w, res)
	}
	return nil
}

func writeCapacityTable(w io.Writer, res *measure.Result) error {
	c := res.Config
	if c.Measures&measure.MeasureHitRatio != 0 {
		fmt.Fprintf(w, "Hit ratio: one goroutine replays %d requests", res.ReplayRequests)
		if res.ReplayWarmup > 0 {
			fmt.Fprintf(w, ", the first %d not counted", res.ReplayWarmup)
		}
		fmt.Fprintln(w, "; a read that misses inserts its key.")
		fmt.Fprintf(w, "An unbounded cache (only first requests miss) gets %.2f%%.\n", 100*res.Ceiling)
		fmt.Fprintln(w, "belady is Belady's offline optimum (a miss inserts its key; the entry used farthest in the future goes):")
		fmt.Fprintln(w, "no cache of that capacity that keeps every key set gets more hits on these requests.")
		if len(res.TopShare) > 0 {
			var parts []string
			for i, cp := range res.Capacities {
				parts = append(parts, fmt.Sprintf("%.2f%% at %d", 100*res.TopShare[i], cp))
			}
			fmt.Fprintf(w, "Best any cache can expect with independent requests (the C most popular keys): %s.\n", strings.Join(parts, ", "))
		}
	}
	if c.Measures&measure.MeasureMemory != 0 {
		fmt.Fprintln(w, "Memory: live heap per entry of a cache holding C entries (a bounded one after 2C distinct keys, so full and evicting).")
	}
	fmt.Fprintln(w)
	header := []string{"cache", "capacity", "hit ratio", "bytes/entry"}
	var rows [][]string
	last := ""
	ceiling := map[string]*float64{} // unbounded caches' hit ratio
	for _, r := range res.Rows {
		if r.Capacity == 0 && r.HitRatio != nil {
			ceiling[r.Cache] = r.HitRatio
		}
	}
	for _, r := range res.Rows {
		if r.Capacity == 0 || !firstOfCapacity(res, r) {
			continue
		}
		name := r.Cache
		hit := r.HitRatio
		if h, ok := ceiling[r.Cache]; ok {
			name += " (unbounded: ceiling)"
			hit = h
		}
		if name == last {
			name = ""
		} else {
			last = name
		}
		rows = append(rows, []string{name, strconv.Itoa(r.Capacity), fmtPct(hit), fmtF(r.BytesPerEntry, 1)})
	}
	if err := cli.WriteTable(w, header, rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}

func writeThroughputTable(w io.Writer, res *measure.Result) error {
	c := res.Config
	fmt.Fprintf(w, "Timed runs: requests per second over %v after a warm-up, each goroutine its own stream; hit ratio of\n", c.Duration)
	fmt.Fprintf(w, "those reads; latency of 1 request in %d, %d ns of clock overhead subtracted; GC share of the CPU.\n\n", res.SampleEvery, res.TimerOverhead)
	header := []string{"cache", "capacity", "threads", "Mreq/s", "hit ratio", "Get p50", "p99", "p99.9", "Set p50", "p99", "p99.9", "GC CPU", "allocs/req"}
	var rows [][]string
	lastCache, lastCap := "", ""
	for _, r := range res.Rows {
		if r.Threads == 0 {
			continue
		}
		name, capacity := r.Cache, "unbounded"
		if r.Capacity > 0 {
			capacity = strconv.Itoa(r.Capacity)
		}
		if name == lastCache {
			name = ""
			if capacity == lastCap {
				capacity = ""
			} else {
				lastCap = capacity
			}
		} else {
			lastCache, lastCap = name, capacity
		}
		rows = append(rows, []string{name, capacity, strconv.Itoa(r.Threads), fmtMops(r.OpsPerSec), fmtPct1(r.RunHitRatio),
			fmtNS(r.P50NS), fmtNS(r.P99NS), fmtNS(r.P999NS), fmtNS(r.SetP50NS), fmtNS(r.SetP99NS), fmtNS(r.SetP999NS),
			fmtPct1(r.GCCPUFraction), fmtF(r.AllocsPerOp, 2)})
	}
	if err := cli.WriteTable(w, header, rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}

// writeLoads prints one line per twochoice load report.
func writeLoads(w io.Writer, res *measure.Result) {
	first := true
	for _, r := range res.Rows {
		if r.Load == nil || !firstOfCapacity(res, r) {
			continue
		}
		if first {
			fmt.Fprintln(w, "twochoice load after the memory fill (fluid limit in parentheses):")
			first = false
		}
		l := r.Load
		top := l.MaxLoad
		share := 0.0
		if top < len(l.ShareAtLeast) {
			share = l.ShareAtLeast[top]
		}
		// A cache's report has no fluid limit (its evictions are not the
		// rule's process): "-", not a limit of 0.
		fluid, stash := "-", "-"
		if l.FluidShareAtLeast != nil {
			f := 0.0
			if top < len(l.FluidShareAtLeast) {
				f = l.FluidShareAtLeast[top]
			}
			fluid, stash = fmt.Sprintf("%.3g%%", 100*f), fmt.Sprintf("%.3g", l.FluidStash)
		}
		fmt.Fprintf(w, "  %s at %d: %d entries in %d buckets of %d (%v, d = %d), utilization %.3f, max load %d in %.3g%% of buckets (%s), stash %d (%s)\n",
			r.Cache, r.Capacity, l.Entries, l.Buckets, l.BucketSize, l.Placement, l.Choices, l.Utilization, top, 100*share, fluid, l.Stash, stash)
	}
}

// CSVHeader is the header of WriteCSV: the JSON field names.
var CSVHeader = []string{"cache", "workload", "capacity", "threads", "hit_ratio", "ops_per_sec", "p50_ns", "p99_ns", "p999_ns",
	"set_p50_ns", "set_p99_ns", "set_p999_ns", "run_hit_ratio", "gc_cpu_fraction", "allocs_per_op", "bytes_per_entry", "entries", "seed"}

// WriteCSV prints the rows as CSV, a column per JSON field (but the load
// report), empty where not measured.
func WriteCSV(w io.Writer, rows []measure.Row) error {
	var out [][]string
	itoa := func(n int) string {
		if n == 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	for _, r := range rows {
		out = append(out, []string{r.Cache, r.Workload, itoa(r.Capacity), itoa(r.Threads), fmtCSV(r.HitRatio), fmtCSV(r.OpsPerSec),
			fmtCSV(r.P50NS), fmtCSV(r.P99NS), fmtCSV(r.P999NS), fmtCSV(r.SetP50NS), fmtCSV(r.SetP99NS), fmtCSV(r.SetP999NS),
			fmtCSV(r.RunHitRatio), fmtCSV(r.GCCPUFraction), fmtCSV(r.AllocsPerOp), fmtCSV(r.BytesPerEntry), itoa(r.Entries),
			strconv.FormatUint(r.Seed, 10)})
	}
	return cli.WriteCSV(w, CSVHeader, out)
}

// firstOfCapacity reports whether r is the first row of its cache and
// capacity: a bounded cache has one row per goroutine count, all with the
// same hit ratio and memory.
func firstOfCapacity(res *measure.Result, r measure.Row) bool {
	return r.Threads == 0 || len(res.Config.Threads) == 0 || r.Threads == slices.Min(res.Config.Threads)
}
