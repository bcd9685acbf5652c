package store

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
)

// TestConcurrentReadersAndWriters runs readers, writers and iterators at
// once, through many growths, and checks what every one of them sees: a
// key present throughout is always found, with its value; any value found
// belongs to its key (no torn or misplaced entry); an iteration yields each
// stable key exactly once. Run it under -race.
func TestConcurrentReadersAndWriters(t *testing.T) {
	for _, o := range []Options{
		{Seed: 1},
		{Choices: 1, BucketSize: 2, Seed: 2},
		{Placement: bucket.DoubleHash, Choices: 3, BucketSize: 4, Seed: 3, Hash: 1},
	} {
		t.Run(name(o), func(t *testing.T) { concurrentRun(t, o) })
	}
}

func concurrentRun(t *testing.T, o Options) {
	stable, churn := 2000, 60000
	if testing.Short() {
		stable, churn = 500, 8000
	}
	s := newTestStore[string, string](t, o)
	key := func(i int) string { return "k" + strconv.Itoa(i) }
	for i := range stable {
		s.Set(key(i), key(i))
	}
	var (
		wg       sync.WaitGroup
		done     atomic.Bool
		failures atomic.Int64
		fail     = func(format string, args ...any) {
			if failures.Add(1) <= 5 {
				t.Errorf(format, args...)
			}
		}
	)
	// Two writers: new keys (growth), deletes, and rewrites of stable keys
	// with their own value.
	var writers sync.WaitGroup
	for w := range 2 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := w; i < churn; i += 2 {
				k := key(stable + i)
				s.Set(k, k)
				if i%3 == 0 {
					if !s.Delete(key(stable+i/2)) && (i/2)%2 == w {
						// Only keys this writer set and did not delete.
						fail("Delete(%s) found nothing", key(stable+i/2))
					}
				}
				if i%5 == 0 {
					s.Set(key(i%stable), key(i%stable))
				}
			}
		}()
	}
	// Readers.
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := r; !done.Load(); i++ {
				k := key(i % stable)
				if v, ok := s.Get(k); !ok || v != k {
					fail("Get(%s) = %q, %v during writes", k, v, ok)
				}
				k = key(stable + i%churn)
				if v, ok := s.Get(k); ok && v != k {
					fail("Get(%s) = %q: another key's value", k, v)
				}
			}
		}()
	}
	// An iterator and the observers.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !done.Load() {
			seen := make(map[string]int)
			for k, v := range s.All() {
				if k != v {
					fail("All yielded %s → %s", k, v)
				}
				seen[k]++
			}
			for i := range stable {
				if seen[key(i)] != 1 {
					fail("All yielded stable key %s %d times", key(i), seen[key(i)])
				}
			}
			st := s.Stats()
			if st.Gets != st.Hits+st.Misses {
				fail("stats: gets %d != hits %d + misses %d", st.Gets, st.Hits, st.Misses)
			}
			if r := s.Report(); r.Entries < 0 || len(r.Histogram) != r.BucketSize+1 {
				fail("load report: %+v", r)
			}
			_ = fmt.Sprint(s.Len())
		}
	}()
	// When the writers are through, the others stop.
	writers.Wait()
	done.Store(true)
	wg.Wait()
	if failures.Load() > 0 {
		return
	}
	for i := range stable {
		if v, ok := s.Get(key(i)); !ok || v != key(i) {
			t.Fatalf("after: Get(%s) = %q, %v", key(i), v, ok)
		}
	}
}

// bigVal is a value too large for optimistic reads (layout.go), so that a
// cache of it takes the locked read path, whose readers write the sync
// words that writers lock.
type bigVal [maxOptimisticWords + 1]uint64

// TestCacheConcurrentNewKeys races Sets of the same new keys, the case in
// which a Set that did not serialize with the others on the key's
// candidates (a key enters a bucket only under the locks of all its
// candidates, cache.go) would insert the key twice. Each round deletes a
// few keys, then several goroutines, released together, Set each of them
// (and fill keys, which keep the small cache evicting, so that the keys'
// candidates are full and the inserts pick victims in either bucket).
// After every round the invariant checker looks for a key in two slots,
// and every key must hold a value one of the round's Sets wrote.
func TestCacheConcurrentNewKeys(t *testing.T) {
	rounds := 3000
	if testing.Short() {
		rounds = 400
	}
	for _, o := range []Options{
		{MaxEntries: 64, Seed: 1},
		{MaxEntries: 48, BucketSize: 4, Seed: 2},
		{MaxEntries: 90, Placement: bucket.DoubleHash, Choices: 3, Hash: hashfn.Tabulation, Seed: 3},
	} {
		t.Run(name(o), func(t *testing.T) {
			s := newTestCacheOf[string, int](t, o)
			raceNewKeys(t, s, rounds, func(g, i int) int { return g<<20 | i })
		})
	}
	t.Run("locked reads", func(t *testing.T) {
		s := newTestCache(t, CacheOptions[string, bigVal]{MaxEntries: 64, Seed: 4})
		raceNewKeys(t, s, rounds/4, func(g, i int) bigVal { return bigVal{uint64(g<<20 | i)} })
	})
}

// raceNewKeys runs the rounds of TestCacheConcurrentNewKeys on s; val is
// what goroutine g Sets in round i.
func raceNewKeys[V comparable](t *testing.T, s *Cache[string, V], rounds int, val func(g, i int) V) {
	const (
		goroutines = 6
		hot        = 4
	)
	keys := make([]string, hot)
	for x := range keys {
		keys[x] = "new" + strconv.Itoa(x)
	}
	// gates[i] releases round i's goroutines all at once.
	gates := make([]chan struct{}, rounds)
	for i := range gates {
		gates[i] = make(chan struct{})
	}
	var (
		wg   sync.WaitGroup
		done sync.WaitGroup
	)
	for g := range goroutines {
		wg.Go(func() {
			for i := range rounds {
				<-gates[i]
				for x := range hot {
					// Each goroutine in its own order, so that every
					// key has several first Sets in flight at once.
					s.Set(keys[(x+g)%hot], val(g, i))
				}
				for x := range 3 {
					s.Set("fill"+strconv.Itoa((i*goroutines+g)*3+x), val(g, i))
				}
				done.Done()
			}
		})
	}
	for i := range rounds {
		for _, k := range keys {
			s.Delete(k)
		}
		done.Add(goroutines)
		close(gates[i])
		done.Wait()
		if err := s.checkInvariants(); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		for _, k := range keys {
			v, ok := s.Get(k)
			if !ok {
				continue // evicted by a later Set of this round
			}
			found := false
			for g := range goroutines {
				found = found || v == val(g, i)
			}
			if !found {
				t.Fatalf("round %d: Get(%s) = %v, no Set of this round wrote it", i, k, v)
			}
		}
	}
	wg.Wait()
}

// TestCacheConcurrent runs writers (Set, SetWithTTL, Delete) and readers on
// a small cache that evicts all the time, with the clock moving. A value
// found always belongs to its key; a goroutine's own Set is seen by its
// next Get unless another goroutine's Set evicted it, which only happens to
// keys that share a candidate with a key set meanwhile. Run under -race.
func TestCacheConcurrent(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 4000
	}
	for _, o := range []Options{
		{MaxEntries: 256, Seed: 1},
		{MaxEntries: 100, Choices: 1, BucketSize: 4, Seed: 2},
		{MaxEntries: 300, Placement: bucket.DoubleHash, Choices: 3, Hash: hashfn.Tabulation, Seed: 3},
	} {
		t.Run(name(o), func(t *testing.T) {
			clk := newFakeClock()
			o.Clock = clk
			s := newTestCacheOf[string, string](t, o)
			var wg sync.WaitGroup
			var bad atomic.Int64
			for g := range 4 {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(g), 9))
					for i := range n {
						k := "k" + strconv.Itoa(rng.IntN(1000))
						switch rng.IntN(8) {
						case 0:
							s.Delete(k)
						case 1:
							s.SetWithTTL(k, k, time.Duration(rng.IntN(3))*time.Millisecond)
						case 2, 3:
							s.Set(k, k)
						default:
							if v, ok := s.Get(k); ok && v != k {
								if bad.Add(1) < 5 {
									t.Errorf("Get(%s) = %s", k, v)
								}
							}
						}
						if g == 0 && i%64 == 0 {
							clk.advance(time.Millisecond)
						}
						if s.Len() > o.MaxEntries {
							t.Errorf("Len %d > %d", s.Len(), o.MaxEntries)
						}
					}
				})
			}
			wg.Go(func() {
				for range 20 {
					for k, v := range s.All() {
						if k != v {
							t.Errorf("All yields %s = %s", k, v)
						}
					}
				}
			})
			wg.Wait()
		})
	}
}
