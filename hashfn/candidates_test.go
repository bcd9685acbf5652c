package hashfn

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/twochoice/twochoice/internal/keyset"
	"github.com/twochoice/twochoice/internal/stats"
)

// zLimit is the chi-square z-score above which a test fails: for truly
// uniform candidates a score this high has probability below 3·10⁻⁷.
const zLimit = 5

type keySet struct {
	name string
	n    int
	hash func(f Func, i int) uint64
}

func keySets(t *testing.T) []keySet {
	paths := keyset.GoSourcePaths()
	synth := keyset.Synthetic(100_000, 1)
	sets := []keySet{
		{"sequential", 100_000, func(f Func, i int) uint64 { return f.Uint64(uint64(i)) }},
		{"synthetic-strings", len(synth), func(f Func, i int) uint64 { return f.String(synth[i]) }},
	}
	if len(paths) >= 5000 {
		sets = append(sets, keySet{"goroot-paths", len(paths), func(f Func, i int) uint64 { return f.String(paths[i]) }})
	} else {
		t.Logf("GOROOT source paths unavailable (%d found); real-path keys skipped", len(paths))
	}
	return sets
}

// Each candidate, on its own, must be uniform over its range (the whole
// range, or its part), and candidates 0 and 1 must be independent of each
// other: the joint counts of their top bits are uniform too.
func TestCandidatesUniform(t *testing.T) {
	type setup struct {
		scheme Scheme
		n      uint64
		d      int
	}
	setups := []setup{
		{Independent, 1024, 2}, {Independent, 1000, 4},
		{Parts, 1024, 2}, {Parts, 999, 3},
		{Double, 1024, 2}, {Double, 1021, 4},
	}
	for _, kind := range Kinds() {
		f, _ := New(kind, 12345)
		for _, ks := range keySets(t) {
			for _, s := range setups {
				name := fmt.Sprintf("%v/%s/%v-n%d-d%d", kind, ks.name, s.scheme, s.n, s.d)
				t.Run(name, func(t *testing.T) {
					g, err := NewGenerator(s.scheme, s.n, s.d)
					if err != nil {
						t.Fatal(err)
					}
					// Fewer buckets for smaller key sets keep every expected count ≥ 10.
					counts := make([][]uint64, s.d)
					for k := range counts {
						lo, hi := g.PartBounds(k)
						counts[k] = make([]uint64, hi-lo)
					}
					// The grid must divide both ranges, or its cells would differ in size.
					l0, h0 := g.PartBounds(0)
					l1, h1 := g.PartBounds(1 % s.d)
					grid := uint64(16)
					for (h0-l0)%grid != 0 || (h1-l1)%grid != 0 {
						grid--
					}
					joint := make([]uint64, grid*grid)
					dst := make([]uint64, s.d)
					for i := 0; i < ks.n; i++ {
						g.Fill(ks.hash(f, i), dst)
						for k, c := range dst {
							lo, _ := g.PartBounds(k)
							counts[k][c-lo]++
						}
						joint[(dst[0]-l0)*grid/(h0-l0)*grid+(dst[1%s.d]-l1)*grid/(h1-l1)]++
					}
					for k, c := range counts {
						if z := stats.ChiSquareZ(stats.ChiSquare(c)); z > zLimit {
							t.Errorf("candidate %d not uniform: chi-square z = %.1f", k, z)
						}
					}
					if s.d >= 2 && s.scheme != Double {
						if z := stats.ChiSquareZ(stats.ChiSquare(joint)); z > zLimit {
							t.Errorf("candidates 0 and 1 not independent: chi-square z = %.1f", z)
						}
					}
				})
			}
		}
	}
}

// The test above must be able to fail: candidates taken from a key without
// hashing it (sequential keys reduced directly) are far from uniform.
func TestCandidatesUniformCanFail(t *testing.T) {
	counts := make([]uint64, 1024)
	for i := range uint64(100_000) {
		counts[Reduce(uint32(i*40_000), 1024)]++
	}
	if z := stats.ChiSquareZ(stats.ChiSquare(counts)); z < zLimit {
		t.Fatalf("unhashed keys passed the uniformity test (z = %.1f)", z)
	}
}

func TestDoubleDistinctInRange(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ns := []uint64{1, 2, 4, 8, 64, 1 << 20, 1 << 32, 2, 3, 11, 1009, 65521, 4294967291}
	for _, n := range ns {
		for d := 1; d <= MaxChoices; d++ {
			g, err := NewGenerator(Double, n, d)
			if uint64(d) > n {
				if !errors.Is(err, ErrRange) {
					t.Errorf("n=%d d=%d: want ErrRange, got %v", n, d, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("n=%d d=%d: %v", n, d, err)
			}
			dst := make([]uint64, d)
			for range 2000 {
				h := r.Uint64()
				g.Fill(h, dst)
				seen := map[uint64]bool{}
				for _, c := range dst {
					if c >= n || seen[c] {
						t.Fatalf("n=%d d=%d h=%#x: candidates %v repeat or leave [0,n)", n, d, h, dst)
					}
					seen[c] = true
				}
			}
		}
	}
	if _, err := NewGenerator(Double, 1000, 2); !errors.Is(err, ErrRange) {
		t.Fatalf("double hashing over 1000 buckets (neither prime nor power of two): %v", err)
	}
}

func TestPartsInTheirPart(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []uint64{2, 7, 1000, 1 << 20, 1 << 32} {
		for d := 1; d <= MaxChoices && uint64(d) <= n; d++ {
			g, err := NewGenerator(Parts, n, d)
			if err != nil {
				t.Fatal(err)
			}
			if lo, hi := g.PartBounds(d - 1); hi != n || lo >= hi {
				t.Fatalf("n=%d d=%d: last part [%d,%d)", n, d, lo, hi)
			}
			dst := make([]uint64, d)
			for range 500 {
				g.Fill(r.Uint64(), dst)
				for k, c := range dst {
					lo, hi := g.PartBounds(k)
					if c < lo || c >= hi || g.PartOf(c) != k {
						t.Fatalf("n=%d d=%d: candidate %d = %d outside part [%d,%d)", n, d, k, c, lo, hi)
					}
				}
			}
		}
	}
}

func TestGeneratorRejects(t *testing.T) {
	for _, c := range []struct {
		s Scheme
		n uint64
		d int
	}{{Independent, 0, 1}, {Independent, 1<<32 + 1, 2}, {Independent, 10, 0}, {Independent, 10, 9}, {Parts, 3, 4}, {Scheme(7), 8, 2}} {
		if _, err := NewGenerator(c.s, c.n, c.d); !errors.Is(err, ErrRange) {
			t.Errorf("NewGenerator(%v, %d, %d) = %v, want ErrRange", c.s, c.n, c.d, err)
		}
	}
}

func TestWordStream(t *testing.T) {
	h := uint64(0x0123456789abcdef)
	if Word(h, 0) != 0x89abcdef || Word(h, 1) != 0x01234567 {
		t.Fatal("words 0 and 1 are not the halves of h")
	}
	e := Extend(h, 1)
	if Word(h, 2) != uint32(e) || Word(h, 3) != uint32(e>>32) {
		t.Fatal("words 2 and 3 are not the halves of Extend(h, 1)")
	}
	g, _ := NewGenerator(Independent, 1<<32, 4)
	dst := make([]uint64, 4)
	g.Fill(h, dst)
	for k := range dst {
		if dst[k] != uint64(Word(h, k)) {
			t.Fatalf("candidate %d over 2^32 buckets = %#x, want word %#x", k, dst[k], Word(h, k))
		}
	}
}

func TestPrimes(t *testing.T) {
	var got []uint64
	for n := uint64(0); n < 30; n++ {
		if IsPrime(n) {
			got = append(got, n)
		}
	}
	if fmt.Sprint(got) != "[2 3 5 7 11 13 17 19 23 29]" {
		t.Fatalf("primes below 30: %v", got)
	}
	if PrimeAtLeast(1<<20) != 1048583 || !IsPrime(4294967291) || IsPrime(4294967295) {
		t.Fatal("PrimeAtLeast or IsPrime wrong on known values")
	}
	// Past the largest 64-bit prime there is none: no wrap-around to 2.
	if PrimeAtLeast(math.MaxUint64) != 0 || PrimeAtLeast(1<<64-58) != 0 {
		t.Fatal("PrimeAtLeast at the top of the uint64 range")
	}
}

func TestZeroAllocs(t *testing.T) {
	s := "user:1234:session"
	b := []byte(s)
	g, _ := NewGenerator(Double, 1<<20, 4)
	dst := make([]uint64, 4)
	for _, k := range Kinds() {
		f, _ := New(k, 9)
		var sink uint64
		if a := testing.AllocsPerRun(100, func() {
			sink += f.String(s) + f.Bytes(b) + f.Uint64(sink)
			g.Fill(sink, dst)
		}); a != 0 {
			t.Errorf("%v: %.0f allocations per hash", k, a)
		}
	}
}

// Double hashing's step g (candidate 1 minus candidate 0, mod n) must be
// uniform over every step that keeps the d candidates distinct: 1 … n−1
// for a prime n, the odd steps for a power of two. Uniform candidates one
// at a time (TestCandidatesUniform) do not show a step that never comes.
func TestDoubleStepsUniform(t *testing.T) {
	seed := rand.Uint64()
	r := rand.New(rand.NewPCG(seed, 7))
	for _, n := range []uint64{3, 7, 13, 101, 2, 16, 64} {
		g, err := NewGenerator(Double, n, 2)
		if err != nil {
			t.Fatal(err)
		}
		var steps []uint64
		for s := uint64(1); s < n; s++ {
			if n&(n-1) != 0 || s%2 == 1 {
				steps = append(steps, s)
			}
		}
		counts := make(map[uint64]uint64)
		dst := make([]uint64, 2)
		draws := 2000 * len(steps)
		for range draws {
			g.Fill(r.Uint64(), dst)
			counts[(dst[1]+n-dst[0])%n]++
		}
		obs := make([]uint64, len(steps))
		for i, s := range steps {
			obs[i] = counts[s]
			delete(counts, s)
		}
		if len(counts) != 0 {
			t.Fatalf("n=%d: steps outside %v: %v (seed %d)", n, steps, counts, seed)
		}
		if len(obs) > 1 {
			if z := stats.ChiSquareZ(stats.ChiSquare(obs)); z > zLimit {
				t.Errorf("n=%d: steps not uniform (chi-square z = %.1f): %v (seed %d)", n, z, obs, seed)
			}
		}
	}
}

// IsPrime and PrimeAtLeast hold for the whole uint64 range their docs
// cover. Trial division with q*q ≤ n overflowed past q = 2^32, so on a
// prime above 2^64 - 2^33 (2^64 - 59, the one PrimeAtLeast's doc names)
// it never ended, and above 2^32 it took up to 2^31 divisions.
func TestPrimesNear64Bits(t *testing.T) {
	done := make(chan string, 1)
	go func() {
		var bad []string
		check := func(n uint64, want bool) {
			if IsPrime(n) != want {
				bad = append(bad, fmt.Sprintf("IsPrime(%d) = %v", n, !want))
			}
		}
		check(largestPrime64, true)
		check(1<<61-1, true)                // a Mersenne prime
		check(4294967291*4294967279, false) // two primes below 2^32
		check(4294967291*4294967291, false) // a square
		check(1<<64-1, false)               // 3·5·17·257·641·65537·6700417
		check(3825123056546413051, false)   // a strong pseudoprime to bases 2 to 23
		if p := PrimeAtLeast(largestPrime64 - 20); p != largestPrime64 {
			bad = append(bad, fmt.Sprintf("PrimeAtLeast(2^64-79) = %d", p))
		}
		// Just above 2^32, against trial division done here with q ≤ n/q.
		for n := uint64(1 << 32); n < 1<<32+3000; n++ {
			want := n%2 == 1
			for q := uint64(3); want && q <= n/q; q += 2 {
				want = n%q != 0
			}
			check(n, want)
		}
		done <- strings.Join(bad, "; ")
	}()
	select {
	case bad := <-done:
		if bad != "" {
			t.Fatal(bad)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("IsPrime near 2^64 did not finish in 20 s")
	}
}
