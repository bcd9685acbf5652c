package testutil

import (
	"runtime"
	"testing"
	"time"
)

// PairedFill calls fillStore and fillMap b.N times each, alternating which goes
// first, each call timed on its own after a garbage collection, and
// reports ns/key (the store's time per key, for n keys a fill),
// map-ns/key (the map's) and x-map (the store's time over the map's).
//
// One untimed fill of each comes first. The first fills in a process take
// their memory fresh from the operating system and pay a page fault for
// every 4 KiB of it; later fills reuse the heap the earlier ones freed.
// Without the warm-up the store, which goes first, paid most of those
// faults alone (bench/storebench's timeFills says by how much at 10M
// keys).
func PairedFill(b *testing.B, n int, fillStore, fillMap func()) {
	b.StopTimer()
	timed := func(f func()) time.Duration {
		runtime.GC()
		t0 := time.Now()
		f()
		return time.Since(t0)
	}
	timed(fillStore)
	timed(fillMap)
	b.StartTimer()
	var ts, tm time.Duration
	for i := range b.N {
		if i%2 == 0 {
			ts += timed(fillStore)
			tm += timed(fillMap)
		} else {
			tm += timed(fillMap)
			ts += timed(fillStore)
		}
	}
	b.ReportMetric(float64(ts.Nanoseconds())/float64(b.N*n), "ns/key")
	b.ReportMetric(float64(tm.Nanoseconds())/float64(b.N*n), "map-ns/key")
	b.ReportMetric(float64(ts)/float64(tm), "x-map")
}
