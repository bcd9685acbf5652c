package store

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/testutil"
)

// MapOptions.Growth: NewMap takes 0 (the default, 2) and 1.25 to 4, and
// rejects everything else with ErrOptions.
func TestGrowthOptions(t *testing.T) {
	for _, g := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -2, 1, 1.2, 4.01, 100} {
		if _, err := NewMap[string, int](MapOptions{Growth: g}); !errors.Is(err, ErrOptions) {
			t.Errorf("New with Growth %v: error %v, want ErrOptions", g, err)
		}
	}
	for _, g := range []float64{0, MinGrowth, 1.5, 2, 3, MaxGrowth} {
		s := newTestMap[string, int](t, MapOptions{Growth: g})
		want := g
		if g == 0 {
			want = DefaultGrowth
		}
		if got := s.options().Growth; got != want {
			t.Errorf("New with Growth %v: Options().Growth = %v, want %v", g, got, want)
		}
	}
}

// Each growth multiplies the table's size by Options.Growth, rounded up
// to a size the rule accepts, and the store holds what a Go map holds
// throughout.
func TestGrowthFactor(t *testing.T) {
	testutil.SkipOneGoroutine(t, "a growth per factor and rule")
	n := 60_000
	if testing.Short() {
		n = 15_000
	}
	rules := []struct {
		rule bucket.Placement
		d    int
	}{{bucket.GoLeft, 2}, {bucket.DChoice, 2}, {bucket.DoubleHash, 2}, {bucket.GoLeft, 3}}
	for _, r := range rules {
		for _, g := range []float64{MinGrowth, 1.5, 2, 3, MaxGrowth} {
			t.Run(fmt.Sprintf("%v/d=%d/growth=%v", r.rule, r.d, g), func(t *testing.T) {
				s := newTestMap[uint64, int](t, MapOptions{Placement: r.rule, Choices: r.d, Seed: 5, Growth: g})
				ref := make(map[uint64]int)
				sizes := []uint64{s.tabs.Load().cur.n}
				for i := range n {
					k := uint64(i)*0x9e3779b97f4a7c15 + 3
					s.Set(k, i)
					ref[k] = i
					if c := s.tabs.Load().cur.n; c != sizes[len(sizes)-1] {
						sizes = append(sizes, c)
					}
				}
				if len(sizes) < 4 {
					t.Fatalf("%d keys: sizes %v, want at least 3 growths", n, sizes)
				}
				if got := s.Stats().Grows; got != uint64(len(sizes)-1) {
					t.Errorf("Stats().Grows = %d, want %d (sizes %v)", got, len(sizes)-1, sizes)
				}
				for x := 1; x < len(sizes); x++ {
					prev, next := sizes[x-1], sizes[x]
					if want := grownSize(r.rule, r.d, prev, g); next != want {
						t.Errorf("growth %d: %d to %d buckets, want %d (%v times, rounded up to a size %v takes; sizes %v)", x, prev, next, want, g, r.rule, sizes)
					}
				}
				for k, v := range ref {
					if got, ok := s.Get(k); !ok || got != v {
						t.Fatalf("Get(%#x) = %d, %v; want %d", k, got, ok, v)
					}
				}
			})
		}
	}
}

// grownSize is the size a table of n buckets grows to by factor g, worked
// out from the rules' sizes (sizeAtLeast's documentation) rather than by
// calling it: at least n·g, then the next multiple of d for the rules
// with parts, and for double hashing n·g itself if it is a power of two,
// else the next prime.
func grownSize(rule bucket.Placement, d int, n uint64, g float64) uint64 {
	m := uint64(math.Ceil(float64(n) * g))
	switch rule {
	case bucket.Halves, bucket.GoLeft:
		for m%uint64(d) != 0 {
			m++
		}
	case bucket.DoubleHash:
		if m&(m-1) != 0 {
			for !hashfn.IsPrime(m) {
				m++
			}
		}
	}
	return m
}

// Open takes Growth from its options, as it does SizeHint: the restored
// table grows by it. A Growth for a cache's snapshot is
// ErrOptionsMismatch, and one New would refuse is ErrOptions, not a
// corrupt file.
func TestOpenGrowth(t *testing.T) {
	s := newTestMap[uint64, int](t, MapOptions{Placement: bucket.GoLeft, Choices: 2, Seed: 3})
	key := func(i int) uint64 { return uint64(i)*0x9e3779b97f4a7c15 + 1 }
	for i := range 5000 {
		s.Set(key(i), i)
	}
	r, path := saveOpen(t, s, &Options{Growth: 3})
	if got := r.options().Growth; got != 3 {
		t.Fatalf("restored with Growth 3: Options().Growth = %v", got)
	}
	rm := r.(*Map[uint64, int])
	before := rm.tabs.Load().cur.n
	for i := 5000; r.Stats().Grows == 0; i++ {
		r.Set(key(i), i)
	}
	if after := rm.tabs.Load().cur.n; after < 3*before || after > 3*before+2 {
		t.Errorf("restored with Growth 3: grew from %d to %d buckets, want 3 times", before, after)
	}
	if r2, err := Open[uint64, int](path, nil); err != nil || r2.options().Growth != DefaultGrowth {
		t.Errorf("Open with nil options: %v, Growth %v; want the default %v", err, r2.options().Growth, DefaultGrowth)
	}
	for _, g := range []float64{1.1, math.NaN()} {
		if _, err := Open[uint64, int](path, &Options{Growth: g}); !errors.Is(err, ErrOptions) || errors.Is(err, ErrCorrupt) {
			t.Errorf("Open with Growth %v: error %v, want ErrOptions and not ErrCorrupt", g, err)
		}
	}
	c := newTestCache[uint64, int](t, CacheOptions{MaxEntries: 500, Seed: 3})
	for i := range 600 {
		c.Set(key(i), i)
	}
	cpath := filepath.Join(t.TempDir(), "c.snap")
	if err := c.Save(cpath); err != nil {
		t.Fatalf("Save: %v", err)
	}
	if _, err := OpenMap[uint64, int](cpath, &MapOptions{Growth: 2}); !errors.Is(err, ErrOptionsMismatch) {
		t.Errorf("OpenMap of a cache's snapshot: error %v, want ErrOptionsMismatch", err)
	}
}
