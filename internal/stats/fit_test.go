package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// A hand-computed case: no pooling needed.
func TestChiSquareFitKnownAnswer(t *testing.T) {
	// Expected 50, 30, 20; observed 45, 35, 20:
	// 25/50 + 25/30 + 0 = 0.5 + 0.8333…
	x2, df := ChiSquareFit([]uint64{45, 35, 20}, []float64{0.5, 0.3, 0.2})
	if df != 2 || math.Abs(x2-(0.5+25.0/30)) > 1e-12 {
		t.Fatalf("ChiSquareFit = %v, %d; want %v, 2", x2, df, 0.5+25.0/30)
	}
}

// Small cells are pooled with their neighbours, and a small remainder joins
// the last pooled cell.
func TestChiSquareFitPools(t *testing.T) {
	// 100 observations; expected 60, 2, 2, 32, 2, 2 → cells {60}, {2,2,32},
	// and the remainder {2,2} joins the last: {60}, {40}.
	p := []float64{0.6, 0.02, 0.02, 0.32, 0.02, 0.02}
	x2, df := ChiSquareFit([]uint64{50, 5, 5, 30, 5, 5}, p)
	want := 100.0/60 + 100.0/40
	if df != 1 || math.Abs(x2-want) > 1e-12 {
		t.Fatalf("ChiSquareFit = %v, %d; want %v, 1", x2, df, want)
	}
}

// The test must tell a geometric law from a slightly different one, and
// accept samples of the right one.
func TestChiSquareFitSeparates(t *testing.T) {
	const cells = 40
	p := make([]float64, cells)
	for i := range p {
		p[i] = math.Pow(0.9, float64(i))
	}
	r := rand.New(rand.NewPCG(3, 4))
	draw := func(q float64) []uint64 {
		c := make([]uint64, cells)
		for range 1_000_000 {
			// Geometric with ratio q, truncated to the cells by rejection.
			for {
				k := int(math.Log(1-r.Float64()) / math.Log(q))
				if k < cells {
					c[k]++
					break
				}
			}
		}
		return c
	}
	if z := ChiSquareZ(ChiSquareFit(draw(0.9), p)); math.Abs(z) > 5 {
		t.Errorf("right law: z = %.2f, want |z| < 5", z)
	}
	if z := ChiSquareZ(ChiSquareFit(draw(0.905), p)); z < 5 {
		t.Errorf("wrong law: z = %.2f, want > 5", z)
	}
}
