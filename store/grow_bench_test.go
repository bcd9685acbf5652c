package store

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/twochoice/twochoice/internal/keyset"
	"github.com/twochoice/twochoice/internal/testutil"
)

// BenchmarkGrowthFactor compares growth factors on the Set of new keys into
// a growing store (ns/key) and the heap per entry at the end, against a Go
// map in the same run: the measurement behind the growth factor in grow.go.
func BenchmarkGrowthFactor(b *testing.B) {
	n := 2_000_000
	if testing.Short() {
		n = 20_000
	}
	keys := keyset.Synthetic(n, 5)
	for _, f := range []float64{1.5, 2} {
		b.Run(fmt.Sprintf("growth=%v", f), func(b *testing.B) {
			var before, after runtime.MemStats
			for range b.N {
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&before)
				b.StartTimer()
				s, _ := NewMap[string, int64](MapOptions{Seed: 1, Growth: f})
				for i, k := range keys {
					s.Set(k, int64(i))
				}
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&after)
				runtime.KeepAlive(s)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "bytes/entry")
		})
	}
	b.Run("map", func(b *testing.B) {
		for range b.N {
			m := make(map[string]int64)
			for i, k := range keys {
				m[k] = int64(i)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
	})
}

// BenchmarkSetGrowingPaired fills an empty store and an empty Go map with
// the same 2M new keys, in alternating order, each fill timed on its own,
// and reports the store's time over the map's (x-map). On a shared machine
// the pairing keeps the ratio steadier than two separate benchmarks' ns/op;
// bench/storebench's BenchmarkSetGrowingRatio times the same at 10M keys.
func BenchmarkSetGrowingPaired(b *testing.B) {
	n := 2_000_000
	if testing.Short() {
		n = 20_000
	}
	keys := keyset.Synthetic(n, 5)
	fillStore := func() {
		s, _ := NewMap[string, int64](MapOptions{Seed: 1})
		for i, k := range keys {
			s.Set(k, int64(i))
		}
		runtime.KeepAlive(s)
	}
	fillMap := func() {
		m := make(map[string]int64)
		for i, k := range keys {
			m[k] = int64(i)
		}
		runtime.KeepAlive(m)
	}
	testutil.PairedFill(b, n, fillStore, fillMap)
}
