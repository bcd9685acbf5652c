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
					sized := newTestStore[uint64, int](t, o)
					if got, want := sized.Load().Buckets, int(tableFor(&sized.opts, uint64(hint))); got != want {
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
					if a, b := grown.Load().Buckets, sized.Load().Buckets; a != b && grown.Stats().Grows == uint64(growthsTo(&o, uint64(a))) {
						t.Errorf("after %d Sets: %d buckets grown from empty, %d with the hint", hint, a, b)
					}
					for _, s := range []*Store[uint64, int]{grown, sized} {
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
					maxE, _ := thresholds(&sized.opts, tableFor(&sized.opts, uint64(hint)))
					for i := hint; i <= int(maxE); i++ {
						sized.Set(uint64(i)*0x9e3779b97f4a7c15+1, i)
					}
					if sized.Stats().Grows == 0 {
						t.Errorf("%d Sets into a store sized for %d: no growth", maxE+1, hint)
					}
					// Clear goes back to the hinted table.
					sized.Clear()
					if got, want := sized.Load().Buckets, int(tableFor(&sized.opts, uint64(hint))); got != want {
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
		{Options{SizeHint: 10, MaxEntries: 100}, "unbounded"},
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
