package store

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// Peek answers as Get does, but counts nothing, leaves the policy word as
// it was, and leaves an expired entry in place.
func TestPeek(t *testing.T) {
	seed := seedFor(t)
	clk := newFakeClock()
	s := newTestCache(t, CacheOptions[int, int]{MaxEntries: 500, Seed: seed, Clock: clk})
	rng := rand.New(rand.NewPCG(seed, 1))
	ref := map[int]int{} // the live entries: the cache never evicts below 500 keys
	for i := range 300 {
		k := rng.IntN(400)
		if rng.IntN(4) == 0 {
			s.SetWithTTL(k, i, time.Second)
			ref[k] = -i - 1 // expires
		} else {
			s.Set(k, i)
			ref[k] = i
		}
	}
	word := func(k int) uint32 { return policyWord(s, k) }
	for k := range 400 {
		s.Set(1000+k, k) // moves the clock on, so that a use would show
	}
	st0 := s.Stats()
	clk.advance(2 * time.Second)
	len0 := s.Len()
	for k := range 400 {
		w := word(k)
		v, ok := s.Peek(k)
		want, held := ref[k]
		if want < 0 {
			held = false
		}
		if ok != held || ok && v != want {
			t.Fatalf("Peek(%d) = %d, %v; want %d, %v", k, v, ok, want, held)
		}
		if got := word(k); got != w {
			t.Fatalf("Peek(%d) changed the policy word from %#x to %#x", k, w, got)
		}
	}
	if st := s.Stats(); st.Gets != st0.Gets || st.Expirations != st0.Expirations {
		t.Errorf("Peek counted: Stats %+v, before %+v", st, st0)
	}
	if s.Len() != len0 {
		t.Errorf("Peek removed expired entries: Len %d, was %d", s.Len(), len0)
	}
	// Get agrees, and counts.
	for k, want := range ref {
		v, ok := s.Get(k)
		if ok != (want >= 0) || ok && v != want {
			t.Fatalf("Get(%d) = %d, %v; want %d", k, v, ok, want)
		}
	}
}

// Values yields the values All yields, and stops when the loop does.
func TestValues(t *testing.T) {
	m := newTestMap[int, int](t, MapOptions{Seed: 1})
	c := newTestCache(t, CacheOptions[int, int]{MaxEntries: 1000, Seed: 1})
	for i := range 800 {
		m.Set(i, i*7)
		c.Set(i, i*7)
	}
	for name, s := range map[string]kv[int, int]{"map": m, "cache": c} {
		var all, vals []int
		for _, v := range s.All() {
			all = append(all, v)
		}
		for v := range s.Values() {
			vals = append(vals, v)
		}
		slices.Sort(all)
		slices.Sort(vals)
		if len(vals) != s.Len() || !slices.Equal(all, vals) {
			t.Errorf("%s: Values gave %d values, All %d, Len %d", name, len(vals), len(all), s.Len())
		}
		n := 0
		for range s.Values() {
			if n++; n == 10 {
				break
			}
		}
		if n != 10 {
			t.Errorf("%s: a loop that stopped at 10 ran %d times", name, n)
		}
	}
}
