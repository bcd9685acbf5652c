package store

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"
)

// GetOrSet stores only what is absent and returns what is there, in a
// growing store and in a cache, and counts as a Get (and a Set when it
// stores).
func TestGetOrSet(t *testing.T) {
	for _, o := range []Options{{Seed: 3}, {Seed: 3, MaxEntries: 1000}} {
		t.Run(fmt.Sprintf("MaxEntries=%d", o.MaxEntries), func(t *testing.T) {
			s := newTestStore[string, int](t, o)
			for i := range 500 {
				if v, loaded := s.GetOrSet(fmt.Sprint(i), i); loaded || v != i {
					t.Fatalf("GetOrSet(%d, %d) of a new key = %d, %v; want %d, false", i, i, v, loaded, i)
				}
			}
			for i := range 500 {
				if v, loaded := s.GetOrSet(fmt.Sprint(i), -1); !loaded || v != i {
					t.Fatalf("GetOrSet(%d, -1) of a stored key = %d, %v; want %d, true", i, v, loaded, i)
				}
				if v, ok := s.Get(fmt.Sprint(i)); !ok || v != i {
					t.Fatalf("Get(%d) after GetOrSet of a stored key = %d, %v; want %d", i, v, ok, i)
				}
			}
			st := s.Stats()
			if st.Hits != 1000 || st.Misses != 500 || st.Sets != 500 || s.Len() != 500 {
				t.Errorf("hits %d, misses %d, sets %d, Len %d; want 1000, 500, 500, 500", st.Hits, st.Misses, st.Sets, s.Len())
			}
		})
	}
}

// In a cache an expired entry is absent to GetOrSet: it stores the new
// value, with the default TTL.
func TestGetOrSetExpired(t *testing.T) {
	clk := newFakeClock()
	s := newTestCache(t, CacheOptions[string, int]{Seed: 5, MaxEntries: 100, Clock: clk, DefaultTTL: time.Minute})
	s.SetWithTTL("a", 1, time.Second)
	if v, loaded := s.GetOrSet("a", 2); !loaded || v != 1 {
		t.Fatalf("GetOrSet of a live entry = %d, %v; want 1, true", v, loaded)
	}
	clk.ns.Add(int64(2 * time.Second))
	if v, loaded := s.GetOrSet("a", 2); loaded || v != 2 {
		t.Fatalf("GetOrSet of an expired entry = %d, %v; want 2, false", v, loaded)
	}
	clk.ns.Add(int64(30 * time.Second))
	if v, ok := s.Get("a"); !ok || v != 2 {
		t.Fatalf("Get within the default TTL = %d, %v; want 2", v, ok)
	}
	clk.ns.Add(int64(time.Minute))
	if _, ok := s.Get("a"); ok {
		t.Fatal("the stored entry did not take the default TTL")
	}
}

// Goroutines that race GetOrSet on the same new keys agree: exactly one
// stores each key, and every other gets its value back. In a growing
// store the keys come in while the table grows; in a cache, with room for
// all of them, none is evicted.
func TestGetOrSetConcurrent(t *testing.T) {
	const workers = 6
	keys := 20_000
	if testing.Short() {
		keys = 3000
	}
	for _, o := range []Options{{Seed: 9}, {Seed: 9, MaxEntries: 4 * keys}} {
		t.Run(fmt.Sprintf("MaxEntries=%d", o.MaxEntries), func(t *testing.T) {
			s := newTestStore[int, int](t, o)
			got := make([][]int, workers)
			stored := make([][]bool, workers)
			var wg sync.WaitGroup
			for w := range workers {
				got[w], stored[w] = make([]int, keys), make([]bool, keys)
				wg.Go(func() {
					for i := range keys {
						v, loaded := s.GetOrSet(i, w*keys+i)
						got[w][i], stored[w][i] = v, !loaded
					}
				})
			}
			wg.Wait()
			var errs []error
			for i := range keys {
				winners := 0
				for w := range workers {
					if stored[w][i] {
						winners++
						if got[w][i] != w*keys+i {
							errs = append(errs, fmt.Errorf("key %d: worker %d stored but got %d back", i, w, got[w][i]))
						}
					}
					if got[w][i] != got[0][i] {
						errs = append(errs, fmt.Errorf("key %d: worker %d got %d, worker 0 got %d", i, w, got[w][i], got[0][i]))
					}
				}
				if v, ok := s.Get(i); winners != 1 || !ok || v != got[0][i] {
					errs = append(errs, fmt.Errorf("key %d: %d workers stored it; Get = %d, %v; they got %d", i, winners, v, ok, got[0][i]))
				}
				if len(errs) > 5 {
					break
				}
			}
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			if s.Len() != keys {
				t.Errorf("Len %d, want %d", s.Len(), keys)
			}
		})
	}
}

// TestCacheGetOrSetInformsPolicy: a cache read and filled through
// GetOrSet alone shows its eviction policy the same requests as one that
// calls Get and, on a miss, Set: its miniatures replay the same sampled
// Gets, and its hits come within a few tenths of a point. (Not to the
// request: a Get and a Set read the eviction clock through the stripes of
// their own stack addresses, which may lag it by a few ticks, where a
// GetOrSet reads it through one; see clock.go.)
func TestCacheGetOrSetInformsPolicy(t *testing.T) {
	seed := seedFor(t)
	const maxE = 1024
	o := CacheOptions[uint64, int]{MaxEntries: maxE, Seed: seed | 1}
	viaGet, viaGetOrSet := newTestCache(t, o), newTestCache(t, o)
	for i := range 40 * maxE {
		k := uint64(i % (2 * maxE))
		if _, ok := viaGet.Get(k); !ok {
			viaGet.Set(k, i)
		}
		viaGetOrSet.GetOrSet(k, i)
	}
	a, b := viaGet.Stats(), viaGetOrSet.Stats()
	pa, pb := viaGet.Policy(), viaGetOrSet.Policy()
	t.Logf("Get and Set: %d hits, %d sampled Gets, ranking %s; GetOrSet: %d, %d, %s",
		a.Hits, pa.SampledGets, pa.Ranking, b.Hits, pb.SampledGets, pb.Ranking)
	if pa.SampledGets == 0 || pb.SampledGets != pa.SampledGets {
		t.Errorf("the miniatures replayed %d sampled GetOrSets, and %d sampled Gets", pb.SampledGets, pa.SampledGets)
	}
	if a.Gets != b.Gets || b.Sets != b.Misses {
		t.Errorf("Get and Set: %+v\nGetOrSet: %+v", a, b)
	}
	if d := math.Abs(float64(a.Hits)-float64(b.Hits)) / float64(a.Gets); d > 0.005 {
		t.Errorf("Get and Set hit %d times, GetOrSet %d times, of %d", a.Hits, b.Hits, a.Gets)
	}
}
