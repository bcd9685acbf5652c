package sim

import (
	"context"
	"fmt"
	"testing"

	"github.com/twochoice/twochoice/bucket"
)

// benchBalls is the fewest balls one op of BenchmarkLevels places: small
// sizes take several runs per op, as a sweep does (400 runs at 2^12), so
// that an op lasts long enough to time and the per-run costs (state,
// seeding, histogram) are counted once per run, as in a sweep.
const benchBalls = 1 << 22

// BenchmarkLevels times the levels engine at m = n through Run with one
// worker, the path a sweep takes, and reports ns per ball (the target:
// at most 3). One op is max(1, 2^22/n) runs; use a small fixed
// -benchtime such as 3x (a run at 2^36 places 6.9·10^10 balls).
func BenchmarkLevels(b *testing.B) {
	sizes := []int{12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 26, 28, 30, 36}
	if testing.Short() {
		sizes = []int{12}
	}
	for _, rule := range fourRules {
		for _, lg := range sizes {
			b.Run(fmt.Sprintf("%v/n=2^%d", rule, lg), func(b *testing.B) {
				n := uint64(1) << lg
				runs := int(max(1, benchBalls>>lg))
				ctx := context.Background()
				for i := 0; b.Loop(); i++ {
					c := Config{Rule: rule, Bins: n, Runs: runs, Seed: uint64(i), Engine: Levels, Workers: 1}
					if _, err := Run(ctx, c); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(runs)/float64(n), "ns/ball")
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
