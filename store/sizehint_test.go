package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
)

// A store given SizeHint h starts at the table that a store without one
// reaches after h Sets, and holds h keys without growing; past the hint
// it grows as any store does. Both stores hold what a Go map holds.
func TestSizeHint(t *testing.T) {
	rules := []struct {
		rule bucket.Placement
		d    int
	}{{bucket.OneChoice, 1}, {bucket.DChoice, 2}, {bucket.Halves, 2}, {bucket.GoLeft, 2}, {bucket.DoubleHash, 3}, {bucket.GoLeft, 4}}
	hints := []int{1, 1000, 50_000}
	if testing.Short() {
		hints = hints[:2]
	}
	for _, r := range rules {
		for _, kind := range []hashfn.Kind{hashfn.XXHash, hashfn.Tabulation} {
			for _, hint := range hints {
				name := fmt.Sprintf("%v/d=%d/%v/hint=%d", r.rule, r.d, kind, hint)
				t.Run(name, func(t *testing.T) {
					o := Options{Placement: r.rule, Choices: r.d, Hash: kind, Seed: 7}
					grown := newTestStore[uint64, int](t, o)
					o.SizeHint = hint
					sized := newTestMapOf[uint64, int](t, o)
					if got, want := sized.Report().Buckets, int(tableFor(cfgOf(sized), uint64(hint))); got != want {
						t.Fatalf("a new store with hint %d has %d buckets, want %d", hint, got, want)
					}
					ref := make(map[uint64]int)
					for i := range hint {
						k := uint64(i)*0x9e3779b97f4a7c15 + 1
						grown.Set(k, i)
						sized.Set(k, i)
						ref[k] = i
					}
					if g := sized.Stats().Grows; g != 0 {
						t.Errorf("%d Sets into a store sized for them: %d growths, want 0", hint, g)
					}
					if grown.Stats().Grows == 0 && hint > 1000 {
						t.Errorf("%d Sets into a store without a hint: no growth (the test checks nothing)", hint)
					}
					// Only a stash past its bound grows a table early,
					// and then the two part ways.
					if a, b := grown.Report().Buckets, sized.Report().Buckets; a != b && grown.Stats().Grows == uint64(growthsTo(&o, uint64(a))) {
						t.Errorf("after %d Sets: %d buckets grown from empty, %d with the hint", hint, a, b)
					}
					for _, s := range []kv[uint64, int]{grown, sized} {
						if s.Len() != len(ref) {
							t.Fatalf("Len %d, want %d", s.Len(), len(ref))
						}
						for k, v := range ref {
							if got, ok := s.Get(k); !ok || got != v {
								t.Fatalf("Get(%#x) = %d, %v; want %d", k, got, ok, v)
							}
						}
					}
					// Past the table's threshold, the store grows.
					maxE, _ := thresholds(cfgOf(sized), tableFor(cfgOf(sized), uint64(hint)))
					for i := hint; i <= int(maxE); i++ {
						sized.Set(uint64(i)*0x9e3779b97f4a7c15+1, i)
					}
					if sized.Stats().Grows == 0 {
						t.Errorf("%d Sets into a store sized for %d: no growth", maxE+1, hint)
					}
					// Clear goes back to the hinted table.
					sized.Clear()
					if got, want := sized.Report().Buckets, int(tableFor(cfgOf(sized), uint64(hint))); got != want {
						t.Errorf("after Clear: %d buckets, want %d", got, want)
					}
				})
			}
		}
	}
}

// growthsTo counts the steps of the growth path from an empty table to a
// table of n buckets (-1 if n is not on it).
func growthsTo(o *Options, n uint64) int {
	m := tableFor(o, 0)
	for steps := 0; ; steps++ {
		if m == n {
			return steps
		}
		next := nextSize(o, m)
		if next == m || m > n {
			return -1
		}
		m = next
	}
}

func TestSizeHintOptions(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{SizeHint: -1}, "negative"},
		{Options{SizeHint: MaxSizeHint + 1}, "MaxSizeHint"},
	} {
		s, err := New[string, int](c.o)
		if !errors.Is(err, ErrOptions) || s != nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, %v; want ErrOptions saying %q", c.o, s, err, c.want)
		}
	}
	// The largest hint is accepted by resolve; New would allocate it.
	if _, err := (Options{SizeHint: MaxSizeHint}).resolve(); err != nil {
		t.Errorf("SizeHint MaxSizeHint: %v", err)
	}
}

// Open honours SizeHint as New does: a snapshot whose table is smaller
// than the hint's is restored into the hint's table, every key with its
// value, and the store then takes the hinted keys without growing; a hint
// the snapshot's table meets restores the saved buckets as they were.
func TestOpenSizeHint(t *testing.T) {
	o := Options{Placement: bucket.GoLeft, Choices: 2, Seed: 11}
	s := newTestMapOf[uint64, int](t, o)
	ref := make(map[uint64]int)
	key := func(i int) uint64 { return uint64(i)*0x9e3779b97f4a7c15 + 1 }
	for i := range 3000 {
		s.Set(key(i), i)
		ref[key(i)] = i
	}
	saved := s.Report()
	const hint = 40_000
	r, path := saveOpen(t, s, &Options{SizeHint: hint})
	if got, want := r.Report().Buckets, int(tableFor(cfgOf(r), hint)); got != want || got <= saved.Buckets {
		t.Fatalf("restored with hint %d: %d buckets, want %d (saved: %d)", hint, got, want, saved.Buckets)
	}
	if r.Len() != len(ref) {
		t.Fatalf("restored Len %d, want %d", r.Len(), len(ref))
	}
	for k, v := range ref {
		if got, ok := r.Get(k); !ok || got != v {
			t.Fatalf("restored Get(%#x) = %d, %v; want %d", k, got, ok, v)
		}
	}
	for i := len(ref); i < hint; i++ {
		r.Set(key(i), i)
	}
	if g := r.Stats().Grows; g != 0 {
		t.Errorf("%d keys into a store restored with hint %d: %d growths, want 0", hint, hint, g)
	}
	r.Clear()
	if got, want := r.Report().Buckets, int(tableFor(cfgOf(r), hint)); got != want {
		t.Errorf("after Clear: %d buckets, want the hint's %d", got, want)
	}

	// A hint the saved table already meets: the saved buckets.
	for _, small := range []int{0, 1, 3000} {
		got, err := Open[uint64, int](path, &Options{SizeHint: small})
		if err != nil {
			t.Fatalf("Open with hint %d: %v", small, err)
		}
		sameReport(t, saved, got.Report())
		if err := got.checkInvariants(); err != nil {
			t.Errorf("restored with hint %d: %v", small, err)
		}
	}

	// Hints New refuses, and a hint for a cache.
	for _, c := range []struct {
		hint int
		want error
	}{{-1, ErrOptions}, {MaxSizeHint + 1, ErrOptions}} {
		if got, err := Open[uint64, int](path, &Options{SizeHint: c.hint}); !errors.Is(err, c.want) || got != nil {
			t.Errorf("Open with hint %d: %v, %v; want %v", c.hint, got, err, c.want)
		}
	}
	c := newTestCache[uint64, int](t, CacheOptions{MaxEntries: 100, Seed: 3})
	c.Set(1, 1)
	_, cpath := saveOpen(t, c, nil)
	if got, err := OpenMap[uint64, int](cpath, &MapOptions{SizeHint: 10}); !errors.Is(err, ErrOptionsMismatch) || got != nil {
		t.Errorf("OpenMap of a cache with a hint: %v, %v; want ErrOptionsMismatch", got, err)
	}
}
