package measure

import (
	"slices"
	_ "unsafe" // for go:linkname
)

// nanotime is the runtime's monotonic clock in nanoseconds.
//
// Why not time.Now: a latency sample reads the clock twice around one
// cache call of a few tens of nanoseconds, so the clock's own cost is the
// floor of every sample. time.Now reads the wall clock and the monotonic
// clock (about 100 ns a call on a 2-core AMD EPYC VM); nanotime reads
// only the monotonic one (about 34 ns). runtime.nanotime is one of the
// runtime functions that the runtime itself marks as reachable by a
// linkname directive, because widely used packages call it, so the linker
// allows it.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// TimerOverhead returns what two back-to-back clock reads measure with
// nothing between them: the median of many tries. A sample of one call
// measures the call plus this, so it is subtracted from every sample.
func TimerOverhead() int64 {
	const tries = 20_001
	d := make([]int64, tries)
	for i := range d {
		t0 := nanotime()
		t1 := nanotime()
		d[i] = t1 - t0
	}
	slices.Sort(d)
	return d[tries/2]
}
