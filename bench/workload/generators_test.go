package workload

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/internal/stats"
)

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

func fmtFloat(f float64) string { return "s=" + strconv.FormatFloat(f, 'g', -1, 64) }

func TestUniform(t *testing.T) {
	seed := testSeed(t)
	u, err := NewUniform(1000, seed)
	if err != nil {
		t.Fatal(err)
	}
	c := make([]uint64, 1000)
	reqs := make([]Request[uint64], 1000)
	for range 500 {
		u.Read(reqs)
		for _, r := range reqs {
			c[r.Key]++ // panics on a key ≥ 1000
		}
	}
	if z := stats.ChiSquareZ(stats.ChiSquare(c)); math.Abs(z) > 5 {
		t.Fatalf("uniform keys: z = %.2f", z)
	}
	if _, err := NewUniform(0, 1); !errors.Is(err, ErrParam) {
		t.Fatalf("NewUniform(0) error = %v", err)
	}
}

func TestScan(t *testing.T) {
	s, err := NewScan(3)
	if err != nil {
		t.Fatal(err)
	}
	reqs := make([]Request[uint64], 7)
	s.Read(reqs)
	if got := keysOf(reqs); !equal(got, []uint64{0, 1, 2, 0, 1, 2, 0}) {
		t.Fatalf("scan keys %v", got)
	}
	s.Read(reqs[:2])
	if reqs[0].Key != 1 || reqs[1].Key != 2 {
		t.Fatalf("scan does not continue across Reads: %v", reqs[:2])
	}
	if _, err := NewScan(0); !errors.Is(err, ErrParam) {
		t.Fatalf("NewScan(0) error = %v", err)
	}
}

func equal[K comparable](a, b []K) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestMix(t *testing.T) {
	seed := testSeed(t)
	for _, p := range []float64{0, 0.05, 0.5, 1} {
		s, _ := NewScan(100)
		w, err := Mix[uint64](s, p, seed)
		if err != nil {
			t.Fatal(err)
		}
		const n = 200_000
		reqs, _ := Collect(w, n)
		writes := 0
		for i, r := range reqs {
			if r.Key != uint64(i%100) {
				t.Fatalf("Mix changed key %d to %d", i%100, r.Key)
			}
			if r.Op == Write {
				writes++
			}
		}
		if !stats.Within(float64(writes), p*n, stats.BinomialSigma(n, p), 5) {
			t.Errorf("writes = %v: %d writes in %d requests", p, writes, n)
		}
	}
	s, _ := NewScan(1)
	for _, p := range []float64{-0.1, 1.1, math.NaN()} {
		if _, err := Mix[uint64](s, p, 1); !errors.Is(err, ErrParam) {
			t.Errorf("Mix(%v) error = %v", p, err)
		}
	}
}

func TestStrings(t *testing.T) {
	names := []string{"a", "b", "c"}
	s, _ := NewScan(3)
	got, _ := Collect(Strings(Limit[uint64](s, 5), names), 10)
	if k := keysOf(got); !equal(k, []string{"a", "b", "c", "a", "b"}) {
		t.Fatalf("Strings keys %v", k)
	}
	// A key past the names is an error, after the good ones.
	w := Strings(Replay("r", Reads([]uint64{0, 1, 7, 2})), names)
	got, err := readAll(t, w, 10)
	if !errors.Is(err, ErrRange) || len(got) != 2 {
		t.Fatalf("Strings with key 7 of 3 names: %v, %v", got, err)
	}
}

func TestAliasMatchesWeights(t *testing.T) {
	seed := testSeed(t)
	w := []float64{5, 0, 1, 1e-3, 30, 0.5, 7, 7, 2, 0, 100}
	a := newAlias(w)
	s, _ := NewUniform(1, seed) // only for its PCG
	c := make([]uint64, len(w))
	for range 2_000_000 {
		c[a.draw(s.rng.Uint64())]++
	}
	if c[1] != 0 || c[9] != 0 {
		t.Fatalf("zero-weight indices drawn: %v", c)
	}
	if z := stats.ChiSquareZ(stats.ChiSquareFit(c, w)); math.Abs(z) > 5 {
		t.Fatalf("alias draws %v: z = %.2f", c, z)
	}
	// And it must notice a different law.
	w2 := append([]float64(nil), w...)
	w2[0] = 5.5
	if z := stats.ChiSquareZ(stats.ChiSquareFit(c, w2)); z < 5 {
		t.Fatalf("alias test passes a wrong law: z = %.2f", z)
	}
}

// One key of weight w among keys of weight 1 is drawn in proportion.
func TestAliasSingleKey(t *testing.T) {
	a := newAlias([]float64{42})
	for _, r := range []uint64{0, 1, math.MaxUint64} {
		if a.draw(r) != 0 {
			t.Fatal("a single key must always be drawn")
		}
	}
}
