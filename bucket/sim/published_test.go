package sim

import (
	"fmt"
	"math"
	"testing"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/internal/stats"
)

// TestPublishedMaxLoads reproduces the published share of runs whose
// fullest bin holds 4 balls (docs/simulation.md), with the published number of
// runs, behind -long: minutes of work. The published figures are
// themselves estimates from that many runs, so the tolerance is z standard
// deviations of the difference of two binomial estimates.
func TestPublishedMaxLoads(t *testing.T) {
	if !*long {
		t.Skip("reproduces the published sweep's max loads; run with -long")
	}
	for _, tc := range []struct {
		lg   int
		runs int
		coin float64 // runs with max load 4, two choices with a coin
		left float64 // the same under go-left
	}{
		{16, 400, 0.35, 0.005},
		{20, 400, 0.998, 0.04},
		{24, 100, 1, 0.58},
	} {
		for _, rc := range []struct {
			rule bucket.Placement
			want float64
		}{{bucket.DChoice, tc.coin}, {bucket.Halves, tc.coin}, {bucket.GoLeft, tc.left}} {
			t.Run(fmt.Sprintf("2^%d/%v", tc.lg, rc.rule), func(t *testing.T) {
				res := run(t, Config{Rule: rc.rule, Bins: 1 << tc.lg, Runs: tc.runs, Seed: 2026})
				got := float64(res.MaxLoadRuns()[4]) / float64(tc.runs)
				p := (got + rc.want) / 2
				sigma := math.Sqrt(2) * stats.BinomialSigma(tc.runs, p) / float64(tc.runs)
				// With p near 0 or 1, a run or two either way is all the
				// resolution there is.
				sigma = max(sigma, 1.5/float64(tc.runs))
				if !stats.Within(got, rc.want, sigma, z) {
					t.Errorf("runs with max load 4: %.3f, published %.3f (±%.3f)", got, rc.want, z*sigma)
				}
				for l, c := range res.MaxLoadRuns() {
					if l != 3 && l != 4 && c > 0 {
						t.Errorf("%d runs topped out at %d; the published runs all reached 3 or 4", c, l)
					}
				}
			})
		}
	}
}
