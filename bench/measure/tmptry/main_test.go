package mtry

import (
	"testing"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/measure"
	"github.com/twochoice/twochoice/bench/workload"
)

func TestTry(t *testing.T) {
	z, _ := workload.NewZipf(1.0, 1_000_000, 1)
	reqs, _ := workload.Collect[uint64](z, 1<<20)
	_ = reqs
	for range 3 {
		for _, name := range []string{"map", "twochoice", "lru"} {
			p, _ := caches.Lookup[uint64, measure.Value](name)
			for _, c := range []int{10000, 100000} {
				keys := make([]uint64, 2*c)
				for i := range keys {
					keys[i] = uint64(i)
				}
				m, cc, _ := measure.Memory(p, c, keys)
				cc.Close()
				t.Logf("%-10s %6d %+v %.1f", name, c, m, m.BytesPerEntry())
			}
		}
	}
}
