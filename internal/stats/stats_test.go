package stats

import (
	"math/rand/v2"
	"testing"
)

// The z-score must separate uniform data from slightly biased data; if it
// could not, every uniformity test built on it would pass vacuously.
func TestChiSquareSeparates(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	uniform := make([]uint64, 1000)
	biased := make([]uint64, 1000)
	for range 1_000_000 {
		uniform[r.IntN(1000)]++
		i := r.IntN(1000)
		if i < 100 && r.IntN(10) == 0 { // bucket 0..99 lose a tenth of their hits
			i += 500
		}
		biased[i]++
	}
	if z := ChiSquareZ(ChiSquare(uniform)); z > 5 || z < -5 {
		t.Errorf("uniform counts: z = %.2f, want |z| < 5", z)
	}
	if z := ChiSquareZ(ChiSquare(biased)); z < 5 {
		t.Errorf("biased counts: z = %.2f, want > 5", z)
	}
}

func TestWithin(t *testing.T) {
	s := BinomialSigma(10000, 0.5) // 50
	if !Within(5100, 5000, s, 3) || Within(5200, 5000, s, 3) {
		t.Fatalf("Within misjudges a 2σ and a 4σ deviation (σ = %v)", s)
	}
}
