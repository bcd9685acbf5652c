package store

import (
	"strconv"
	"sync"
	"testing"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
)

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
		s := newTestCache[string, bigVal](t, CacheOptions{MaxEntries: 64, Seed: 4})
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
