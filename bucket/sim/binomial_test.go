package sim

import (
	"fmt"
	"math"
	"testing"

	"github.com/twochoice/twochoice/internal/stats"
)

// pearson is the chi-square statistic of counts against expected counts,
// pooling the cells expected below 5 into one.
func pearson(counts []uint64, expect []float64) (float64, int) {
	var x2, restC, restE float64
	df := -1
	for i, e := range expect {
		if e < 5 {
			restC += float64(counts[i])
			restE += e
			continue
		}
		d := float64(counts[i]) - e
		x2 += d * d / e
		df++
	}
	if restE > 0 {
		d := restC - restE
		x2 += d * d / restE
		df++
	}
	return x2, df
}

// The binomial sampler's counts fit the binomial law, on both methods and
// both sides of p = 1/2.
func TestBinomialLaw(t *testing.T) {
	g := newStream(3)
	const draws = 200000
	for _, tc := range []struct {
		n uint64
		p float64
	}{{5, 0.3}, {40, 0.1}, {100, 0.2}, {1000, 0.5}, {1000, 0.93}, {30000, 0.004}, {8192, 0.7615}, {1 << 20, 1e-5}} {
		t.Run(fmt.Sprintf("n=%d/p=%g", tc.n, tc.p), func(t *testing.T) {
			mean := float64(tc.n) * tc.p
			sd := math.Sqrt(mean * (1 - tc.p))
			lo := uint64(max(0, math.Floor(mean-8*sd-2)))
			hi := min(tc.n, uint64(math.Ceil(mean+8*sd+2)))
			counts := make([]uint64, hi-lo+1)
			var sum float64
			for range draws {
				k := g.binomial(tc.n, tc.p)
				if k > tc.n {
					t.Fatalf("draw %d > n", k)
				}
				sum += float64(k)
				if k >= lo && k <= hi {
					counts[k-lo]++
				}
			}
			expect := make([]float64, len(counts))
			for i := range expect {
				k := float64(lo + uint64(i))
				nf := float64(tc.n)
				l1, _ := math.Lgamma(nf + 1)
				l2, _ := math.Lgamma(k + 1)
				l3, _ := math.Lgamma(nf - k + 1)
				expect[i] = draws * math.Exp(l1-l2-l3+k*math.Log(tc.p)+(nf-k)*math.Log1p(-tc.p))
			}
			x2, df := pearson(counts, expect)
			if z := stats.ChiSquareZ(x2, df); z > 5 {
				t.Errorf("chi-square %.1f on %d df (z = %.1f)", x2, df, z)
			}
			if m := sum / draws; !stats.Within(m, mean, sd/math.Sqrt(draws), 5) {
				t.Errorf("mean %.4f, want %.4f", m, mean)
			}
		})
	}
}

func TestGeometricLaw(t *testing.T) {
	g := newStream(4)
	for _, p := range []float64{0.5, 0.01, 1e-4} {
		const draws = 100000
		var sum float64
		for range draws {
			sum += float64(g.geometric(p))
		}
		mean, sd := (1-p)/p, math.Sqrt(1-p)/p
		if m := sum / draws; !stats.Within(m, mean, sd/math.Sqrt(draws), 5) {
			t.Errorf("p = %g: mean %.3f, want %.3f", p, m, mean)
		}
	}
}

// logFactorial agrees with math.Lgamma on both sides of its table.
func TestLogFactorial(t *testing.T) {
	for _, k := range []float64{0, 1, 2, 10, 100, 255, 256, 257, 1000, 12345, 1 << 20, 1<<40 + 17} {
		want, _ := math.Lgamma(k + 1)
		got := logFactorial(k)
		if d := math.Abs(got - want); d > 1e-15*max(1, math.Abs(want)) {
			t.Errorf("ln %v! = %.17g, Lgamma says %.17g (off by %.3g)", k, got, want, d)
		}
	}
}
