package measure

import "runtime/metrics"

// runtimeStats reads the runtime's cumulative counters that a timed run
// reports the change of.
type runtimeStats struct {
	gcCPU    float64 // seconds the collector took from the program: all its CPU time but idle marking
	gcCycles uint64  // collection cycles ended
	allocs   uint64  // heap objects allocated, tiny ones included
}

var statNames = []string{
	"/cpu/classes/gc/total:cpu-seconds",
	"/gc/cycles/total:gc-cycles",
	"/gc/heap/allocs:objects",
	"/gc/heap/tiny/allocs:objects",
	// Idle mark workers run on processors that had nothing else to do:
	// runtime/metrics says to subtract them from the total for the GC's
	// cost to the program. On two cores with one goroutine they come to
	// about three quarters of the total.
	"/cpu/classes/gc/mark/idle:cpu-seconds",
}

func readRuntimeStats() runtimeStats {
	s := make([]metrics.Sample, len(statNames))
	for i, n := range statNames {
		s[i].Name = n
	}
	metrics.Read(s)
	f := func(i int) float64 {
		if s[i].Value.Kind() != metrics.KindFloat64 {
			return 0
		}
		return s[i].Value.Float64()
	}
	u := func(i int) uint64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[i].Value.Uint64()
	}
	return runtimeStats{gcCPU: f(0) - f(4), gcCycles: u(1), allocs: u(2) + u(3)}
}

// gcFraction returns the share of the available CPU time (GOMAXPROCS ×
// elapsed seconds) that the garbage collector took in a run, from
// readings before and after it.
//
// The runtime adds up its CPU classes only when a collection cycle ends.
// A timed run starts right after a forced collection, so the difference of
// the two readings is the CPU time of the cycles that ended during the run:
// all cycles that the run's allocations caused but the one, if any, still
// under way when it stopped. Over a run of many cycles that is the GC's
// share; over a run shorter than a cycle it is 0 or the cost of one whole
// cycle, so it is only a guide for short runs.
func gcFraction(before, after runtimeStats, elapsedSec float64, procs int) float64 {
	if elapsedSec <= 0 || procs < 1 {
		return 0
	}
	return (after.gcCPU - before.gcCPU) / (elapsedSec * float64(procs))
}
