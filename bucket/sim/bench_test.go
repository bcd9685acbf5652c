package sim

import (
	"fmt"
	"testing"

	"github.com/twochoice/twochoice/bucket"
)

// BenchmarkLevels times whole runs at m = n and reports ns per ball (the
// issue's target: at most 3). One op is one run; use a small fixed
// -benchtime such as 3x (a run at 2^36 places 6.9·10^10 balls).
func BenchmarkLevels(b *testing.B) {
	sizes := []int{12, 16, 20, 24, 30, 36}
	if testing.Short() {
		sizes = []int{12}
	}
	for _, rule := range fourRules {
		for _, lg := range sizes {
			b.Run(fmt.Sprintf("%v/n=2^%d", rule, lg), func(b *testing.B) {
				n := uint64(1) << lg
				d := 2
				if rule == bucket.OneChoice {
					d = 1
				}
				for i := 0; b.Loop(); i++ {
					c := newLevelsChain(rule, d, n)
					g := newStream(uint64(i))
					c.throw(n, &g)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/ball")
			})
		}
	}
}

// BenchmarkLevelsExactRanks is the two-choice chain with ranks drawn one
// word each (as for parts over 2^31 bins or sizes that are not powers of
// two), at n = 2^20 - 1.
func BenchmarkLevelsExactRanks(b *testing.B) {
	n := uint64(1<<20 - 1)
	for _, rule := range []bucket.Placement{bucket.DChoice, bucket.GoLeft} {
		b.Run(rule.String(), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				c := newLevelsChain(rule, 2, n)
				g := newStream(uint64(i))
				c.throw(n, &g)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/ball")
		})
	}
}
