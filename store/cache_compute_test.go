package store

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Compute and its thin forms against a Go map, one operation at a time,
// in a cache large enough never to evict (its table grows under them).
func TestComputeMatchesMap(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	s := newTestCache(t, CacheOptions[int, int]{MaxEntries: 1 << 16, Seed: seed})
	ref := map[int]int{}
	for i := range 50_000 {
		k := rng.IntN(3000)
		v := rng.IntN(1000)
		old, had := ref[k]
		var got int
		var ok bool
		switch rng.IntN(6) {
		case 0:
			op := ComputeOp(rng.IntN(3))
			var seenOld, seenFound = -1, false
			got, ok = s.Compute(k, func(o int, f bool) (int, ComputeOp) {
				seenOld, seenFound = o, f
				return v, op
			})
			if seenFound != had || had && seenOld != old {
				t.Fatalf("op %d: Compute(%d) saw %d, %v; want %d, %v", i, k, seenOld, seenFound, old, had)
			}
			switch op {
			case ComputeSet:
				ref[k] = v
			case ComputeDelete:
				delete(ref, k)
			}
		case 1:
			stored := s.SetIfAbsent(k, v)
			if stored == had {
				t.Fatalf("op %d: SetIfAbsent(%d) = %v with the key present %v", i, k, stored, had)
			}
			if !had {
				ref[k] = v
			}
			got, ok = s.Get(k)
		case 2:
			set := rng.IntN(2) == 0
			called := false
			got, ok = s.ComputeIfAbsent(k, func() (int, bool) { called = true; return v, set })
			if called == had {
				t.Fatalf("op %d: ComputeIfAbsent(%d) called fn %v with the key present %v", i, k, called, had)
			}
			if !had && set {
				ref[k] = v
			}
		case 3:
			keep := rng.IntN(2) == 0
			called := false
			got, ok = s.ComputeIfPresent(k, func(o int) (int, bool) {
				called = true
				if o != old {
					t.Fatalf("op %d: ComputeIfPresent(%d) saw %d, want %d", i, k, o, old)
				}
				return v, keep
			})
			if called != had {
				t.Fatalf("op %d: ComputeIfPresent(%d) called fn %v with the key present %v", i, k, called, had)
			}
			if had && keep {
				ref[k] = v
			} else if had {
				delete(ref, k)
			}
		case 4:
			s.Set(k, v)
			ref[k] = v
			got, ok = s.Get(k)
		default:
			s.Delete(k)
			delete(ref, k)
			got, ok = s.Get(k)
		}
		want, wantOK := ref[k]
		if ok != wantOK || ok && got != want {
			t.Fatalf("op %d on key %d: got %d, %v; want %d, %v", i, k, got, ok, want, wantOK)
		}
	}
	if s.Len() != len(ref) {
		t.Fatalf("Len %d, the map holds %d", s.Len(), len(ref))
	}
	for k, v := range ref {
		if got, ok := s.Get(k); !ok || got != v {
			t.Fatalf("Get(%d) = %d, %v; want %d", k, got, ok, v)
		}
	}
	if st := s.Stats(); st.Evictions != 0 {
		t.Errorf("%d evictions: the test wants none", st.Evictions)
	}
}

// Compute is atomic against every other write of its key: increments by
// many goroutines, interleaved with Sets and Deletes of other keys in the
// same buckets and a table that grows, lose none; of many SetIfAbsent of
// one key, exactly one stores.
func TestComputeAtomic(t *testing.T) {
	s := newTestCache(t, CacheOptions[int, int]{MaxEntries: 1 << 17, Seed: 9})
	const (
		goroutines = 8
		rounds     = 3200
		keys       = 16
	)
	var wg sync.WaitGroup
	var winners [keys]atomic.Int32
	for g := range goroutines {
		wg.Go(func() {
			for r := range rounds {
				k := (r + g) % keys
				s.Compute(k, func(old int, _ bool) (int, ComputeOp) { return old + 1, ComputeSet })
				// Other keys, to grow the table and write the same buckets.
				s.Set(1000+g*rounds+r, r)
				if r%3 == 0 {
					s.Delete(1000 + g*rounds + r - 1)
				}
				if s.SetIfAbsent(-1-r%keys, g) {
					winners[r%keys].Add(1)
				}
			}
		})
	}
	wg.Wait()
	for k := range keys {
		if v, _ := s.Get(k); v != goroutines*rounds/keys {
			t.Errorf("key %d counted %d increments, want %d", k, v, goroutines*rounds/keys)
		}
		if w := winners[k].Load(); w != 1 {
			t.Errorf("key %d: %d SetIfAbsent stored", -1-k, w)
		}
	}
}

// An expired entry is absent to Compute, which may replace or delete it;
// a stored value gets DefaultTTL.
func TestComputeExpired(t *testing.T) {
	clk := newFakeClock()
	s := newTestCache(t, CacheOptions[string, int]{MaxEntries: 100, Seed: 3, Clock: clk, DefaultTTL: time.Minute})
	s.Set("a", 1)
	clk.advance(2 * time.Minute)
	if _, found := s.Compute("a", func(_ int, found bool) (int, ComputeOp) {
		if found {
			t.Error("an expired entry was found")
		}
		return 2, ComputeSet
	}); !found {
		t.Fatal("Compute did not store")
	}
	clk.advance(30 * time.Second)
	if v, ok := s.Get("a"); !ok || v != 2 {
		t.Errorf("Get = %d, %v; want 2 until DefaultTTL", v, ok)
	}
	clk.advance(time.Minute)
	if _, ok := s.Get("a"); ok {
		t.Error("the computed value outlived DefaultTTL")
	}
	st := s.Stats()
	if st.Sets != 2 {
		t.Errorf("Stats: %d Sets, want 2", st.Sets)
	}
}
