package measure

import "github.com/twochoice/twochoice/store"

// Row is one line of a run's results: one cache at one capacity and one
// number of goroutines. A measure that does not apply to the row, or was
// not asked for, is nil and left out of JSON. Which rows a run has:
//
//   - a bounded cache: one row per capacity and goroutine count, each with
//     the hit ratio and memory at that capacity and the timed run's
//     figures;
//   - Belady's optimum ("belady", package hitratio), when hit ratios are
//     measured: one row per capacity, without goroutines, with its hit
//     ratio alone, after the bounded caches' rows;
//   - an unbounded cache (map, syncmap, twochoice): one row per goroutine
//     count, without a capacity, with its hit ratio (the ceiling: only
//     first requests miss) and the timed run's figures; and one row per
//     capacity, without goroutines, with the memory it takes to hold that
//     many entries.
//
// The JSON field names are a stable schema for scripts: fields are added,
// never renamed, and a field not measured is left out.
type Row struct {
	Cache    string `json:"cache"`
	Workload string `json:"workload"`
	Capacity int    `json:"capacity,omitempty"`
	Threads  int    `json:"threads,omitempty"`

	// HitRatio is the share of the replay's counted reads that hit, with
	// one goroutine and deferred work done (package hitratio).
	HitRatio *float64 `json:"hit_ratio,omitempty"`

	// OpsPerSec is requests per second in the timed run, over all its
	// goroutines: a request is a read (a Get, and a Set when it misses) or
	// a write (a Set).
	OpsPerSec *float64 `json:"ops_per_sec,omitempty"`
	// P50NS, P99NS and P999NS are percentiles of the latency of Get, and
	// SetP50NS… of Set, in nanoseconds, from sampled requests of the timed
	// run, the clock's own overhead subtracted.
	P50NS     *float64 `json:"p50_ns,omitempty"`
	P99NS     *float64 `json:"p99_ns,omitempty"`
	P999NS    *float64 `json:"p999_ns,omitempty"`
	SetP50NS  *float64 `json:"set_p50_ns,omitempty"`
	SetP99NS  *float64 `json:"set_p99_ns,omitempty"`
	SetP999NS *float64 `json:"set_p999_ns,omitempty"`
	// RunHitRatio is the hit ratio of the reads of the timed run, with
	// every goroutine at work and deferred work left to the cache, as
	// users run it.
	RunHitRatio *float64 `json:"run_hit_ratio,omitempty"`
	// GCCPUFraction is the share of the available CPU time the garbage
	// collector took in the timed run; AllocsPerOp the heap allocations
	// per request.
	GCCPUFraction *float64 `json:"gc_cpu_fraction,omitempty"`
	AllocsPerOp   *float64 `json:"allocs_per_op,omitempty"`

	// BytesPerEntry is the live heap per entry of a cache filled to its
	// capacity (see Memory), Entries the entries it then held.
	BytesPerEntry *float64 `json:"bytes_per_entry,omitempty"`
	Entries       int      `json:"entries,omitempty"`

	// Load is the twochoice store's load report after the memory fill.
	Load *store.Report `json:"load,omitempty"`

	// Seed replays the run: the workload's and the streams' seed.
	Seed uint64 `json:"seed"`
}

func f64(x float64) *float64 { return &x }
