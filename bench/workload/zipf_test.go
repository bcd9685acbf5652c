package workload

import (
	"errors"
	"math"
	"testing"

	"github.com/twochoice/twochoice/internal/stats"
)

// zipfPMF is the exact law of ranks 0 … n-1, from the definition.
func zipfPMF(s float64, n int) []float64 {
	p := make([]float64, n)
	var sum float64
	for r := n - 1; r >= 0; r-- {
		p[r] = math.Pow(float64(r+1), -s)
		sum += p[r]
	}
	for r := range p {
		p[r] /= sum
	}
	return p
}

func zipfCounts(t *testing.T, s float64, n int, draws int, seed uint64) []uint64 {
	t.Helper()
	z, err := NewZipf(s, uint64(n), seed)
	if err != nil {
		t.Fatal(err)
	}
	c := make([]uint64, n)
	for range draws {
		r := z.Next()
		if r >= uint64(n) {
			t.Fatalf("zipf(s=%v, n=%d) drew rank %d", s, n, r)
		}
		c[r]++
	}
	return c
}

// The sampler must follow the exact pmf for exponents below, at and above
// 1, including the ones math/rand's Zipf refuses, and next to 1 where the
// formulas switch to series.
func TestZipfMatchesPMF(t *testing.T) {
	seed := testSeed(t)
	draws := 400_000
	if testing.Short() {
		draws = 100_000
	}
	for _, s := range []float64{0.01, 0.5, 0.9, 1 - 1e-10, 1, 1 + 1e-10, 1.1, 2, 5} {
		for _, n := range []int{1, 2, 10, 1000} {
			c := zipfCounts(t, s, n, draws, seed)
			if n == 1 {
				if c[0] != uint64(draws) {
					t.Errorf("s=%v n=1: rank 0 drawn %d of %d times", s, c[0], draws)
				}
				continue
			}
			x2, df := stats.ChiSquareFit(c, zipfPMF(s, n))
			if z := stats.ChiSquareZ(x2, df); math.Abs(z) > 5 {
				t.Errorf("s=%v n=%d: chi-square %.1f on %d df, z = %.2f; want |z| ≤ 5", s, n, x2, df, z)
			}
		}
	}
}

// The same test must reject a law that is slightly off, or it proves
// nothing.
func TestZipfTestDetectsWrongExponent(t *testing.T) {
	seed := testSeed(t)
	c := zipfCounts(t, 0.93, 1000, 1_000_000, seed)
	if z := stats.ChiSquareZ(stats.ChiSquareFit(c, zipfPMF(0.9, 1000))); z < 5 {
		t.Fatalf("draws with s = 0.93 pass as s = 0.9: z = %.2f", z)
	}
}

// With a huge n the share of rank 0 must still be 1/ζ(2) = 6/π² for s = 2,
// and every rank must stay in range.
func TestZipfHugeN(t *testing.T) {
	seed := testSeed(t)
	const n = 1 << 53
	z, err := NewZipf(2, n, seed)
	if err != nil {
		t.Fatal(err)
	}
	const draws = 200_000
	var zeros int
	for range draws {
		r := z.Next()
		if r >= n {
			t.Fatalf("rank %d ≥ n", r)
		}
		if r == 0 {
			zeros++
		}
	}
	p := 6 / (math.Pi * math.Pi)
	if !stats.Within(float64(zeros), p*draws, stats.BinomialSigma(draws, p), 5) {
		t.Fatalf("rank 0 drawn %d of %d times; want about %.0f", zeros, draws, p*draws)
	}
}

func TestZipfParams(t *testing.T) {
	for _, c := range []struct {
		s float64
		n uint64
	}{{0, 10}, {-1, 10}, {math.NaN(), 10}, {math.Inf(1), 10}, {1, 0}, {1, 1<<53 + 1}} {
		if _, err := NewZipf(c.s, c.n, 1); !errors.Is(err, ErrParam) {
			t.Errorf("NewZipf(%v, %d) error = %v; want ErrParam", c.s, c.n, err)
		}
	}
}

func TestZipfReplaysFromSeed(t *testing.T) {
	a, _ := NewZipf(0.9, 1e6, 42)
	b, _ := NewZipf(0.9, 1e6, 42)
	c, _ := NewZipf(0.9, 1e6, 43)
	same, diff := true, false
	for range 1000 {
		x, y, w := a.Next(), b.Next(), c.Next()
		same = same && x == y
		diff = diff || x != w
	}
	if !same || !diff {
		t.Fatalf("same seed same stream: %v; other seed other stream: %v", same, diff)
	}
	if a.Name() != "zipf(s=0.9,n=1000000,seed=42)" {
		t.Errorf("Name = %q", a.Name())
	}
}

func TestGeneratorsDoNotAllocate(t *testing.T) {
	z, _ := NewZipf(0.9, 1e6, 1)
	u, _ := NewUniform(1e6, 1)
	s, _ := NewScan(1e6)
	w, _ := NewWeighted("w", stringsReader("a\t1\nb\t2\n"), 1)
	m, _ := Mix[uint64](z, 0.1, 1)
	g, _ := NewAging(0.9, 1e6, 16, 1)
	reqs := make([]Request[uint64], BatchSize)
	sreqs := make([]Request[string], BatchSize)
	for name, f := range map[string]func(){
		"zipf": func() { z.Read(reqs) }, "uniform": func() { u.Read(reqs) },
		"scan": func() { s.Read(reqs) }, "mix": func() { m.Read(reqs) },
		"weighted": func() { w.Read(sreqs) }, "aging": func() { g.Read(reqs) },
	} {
		if a := testing.AllocsPerRun(10, f); a != 0 {
			t.Errorf("%s: %v allocations per Read", name, a)
		}
	}
}

func TestZipfTopShare(t *testing.T) {
	for _, s := range []float64{0.5, 1, 1.5} {
		p := zipfPMF(s, 100)
		var want float64
		for r := range 10 {
			want += p[r]
		}
		if got := ZipfTopShare(s, 100, 10); math.Abs(got-want) > 1e-12 {
			t.Errorf("ZipfTopShare(%v, 100, 10) = %v; want %v", s, got, want)
		}
	}
	if ZipfTopShare(1, 100, 0) != 0 || ZipfTopShare(1, 100, 100) != 1 || ZipfTopShare(1, 100, 500) != 1 {
		t.Error("ZipfTopShare at c = 0 or c ≥ n")
	}
}

func BenchmarkZipf(b *testing.B) {
	for _, s := range []float64{0.9, 1.1} {
		b.Run(fmtFloat(s), func(b *testing.B) {
			z, _ := NewZipf(s, 1e6, 1)
			reqs := make([]Request[uint64], BatchSize)
			b.ReportAllocs()
			for b.Loop() {
				z.Read(reqs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*BatchSize), "ns/key")
		})
	}
}
