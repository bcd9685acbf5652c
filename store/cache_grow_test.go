package store

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/twochoice/twochoice/internal/testutil"
)

// An empty cache of 10M entries takes the memory of its first table, under
// 1 MiB, not that of its final table (hundreds of MiB).
func TestCacheEmptyTakesLittle(t *testing.T) {
	var s *Cache[string, int64]
	var err error
	a := allocatedBy(func() { s, err = NewCache(CacheOptions[string, int64]{MaxEntries: 10_000_000}) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("NewCache(MaxEntries: 10M) allocated %d KiB in a table of %d buckets", a>>10, s.tab.Load().n)
	if a >= 1<<20 {
		t.Errorf("an empty cache of 10M entries allocated %d KiB, want under 1 MiB", a>>10)
	}
}

// A cache fills tables of growing sizes without evicting, then its final
// table, which has exactly MaxEntries slots and takes what a table
// allocated whole takes: every key set before the final table is still
// there with its value, and once full the cache holds no more memory than
// its final table.
func TestCacheGrowsToFinal(t *testing.T) {
	t.Parallel() // one goroutine of CPU work: it overlaps the other such tests
	for _, o := range []Options{
		{MaxEntries: 100_000, Seed: 1},
		{MaxEntries: 100_000, Seed: 2, Choices: 3, BucketSize: 4},
		{MaxEntries: 50_000, Seed: 3, Choices: 2, BucketSize: 1},
	} {
		if testutil.Race {
			o.MaxEntries /= 4 // the same ladder of tables, a quarter of the work
		}
		t.Run(fmt.Sprintf("d%d-b%d", o.Choices, o.BucketSize), func(t *testing.T) {
			s := newTestCacheOf[uint64, uint64](t, o)
			cfg := s.options()
			sizes := cacheSizes(&cfg)
			if len(sizes) < 3 {
				t.Fatalf("sizes %v: want tables on the way", sizes)
			}
			seen := []uint64{s.tab.Load().n}
			var k uint64
			for ; !s.tab.Load().final; k++ {
				s.Set(k, k*3)
				if n := s.tab.Load().n; n != seen[len(seen)-1] {
					seen = append(seen, n)
					if err := s.checkInvariants(); err != nil {
						t.Fatal(err)
					}
				}
			}
			// The key whose Set made the final table may have evicted
			// nothing either: the final table is empty but for the copy.
			for x := range k {
				if v, ok := s.Get(x); !ok || v != x*3 {
					t.Fatalf("key %d of %d set before the final table: Get = %d, %v", x, k, v, ok)
				}
			}
			if st := s.Stats(); st.Evictions != 0 {
				t.Errorf("%d evictions before the final table", st.Evictions)
			}
			t.Logf("tables of %v buckets; the final one came at %d entries", seen, k)
			for i := range len(seen) - 1 {
				if seen[i] >= seen[i+1] {
					t.Errorf("table sizes %v do not increase", seen)
				}
			}
			for ; k < 4*uint64(o.MaxEntries); k++ {
				s.Set(k, k*3)
			}
			tb := s.tab.Load()
			if !tb.final || tb.slots() != int64(o.MaxEntries) || s.Len() > o.MaxEntries || s.Len() < o.MaxEntries*9/10 {
				t.Errorf("full: final %v, %d slots, Len %d, MaxEntries %d", tb.final, tb.slots(), s.Len(), o.MaxEntries)
			}
		})
	}
}

// A full cache holds what one final table takes, as a table allocated whole
// did: the tables on the way are garbage.
func TestCacheFullHoldsOneTable(t *testing.T) {
	testutil.SkipOneGoroutine(t, "half a million Sets, for a heap measure")
	const n = 1 << 18
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s, err := NewCache(CacheOptions[uint64, uint64]{MaxEntries: n, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	for k := range uint64(2 * n) {
		s.Set(k, k)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	tb := s.tab.Load()
	one := int64(allocatedBy(func() { newCacheTable[uint64, uint64](&s.cfg, s.lay, tb.n, s.tq) }))
	t.Logf("a full cache of %d entries holds %d KiB; its final table takes %d KiB", n, held>>10, one>>10)
	if !tb.final || held > one*11/10 {
		t.Errorf("full (final table %v): %d KiB held, one final table %d KiB", tb.final, held>>10, one>>10)
	}
	runtime.KeepAlive(s)
}

// Writers and readers run while the table grows under them: no Set is
// lost, no Get sees a value that was never stored, and a deleted key stays
// deleted. The cache's bound is large enough that it never evicts.
func TestCacheGrowConcurrent(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	const (
		writers = 4
		perW    = 6000
	)
	s := newTestCache(t, CacheOptions[uint64, uint64]{MaxEntries: 1 << 17, Seed: seed})
	var wg sync.WaitGroup
	for w := range uint64(writers) {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, w))
			for i := range uint64(perW) {
				k := i*writers + w
				s.Set(k, k+1)
				if i%7 == 3 {
					s.Delete(k)
				}
				// A key of another writer: its value, if any, is the one
				// that writer stores.
				x := rng.Uint64N(writers * perW)
				if v, ok := s.Get(x); ok && v != x+1 {
					t.Errorf("Get(%d) = %d", x, v)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 3 {
			n := 0
			for k, v := range s.All() {
				if v != k+1 {
					t.Errorf("All: %d → %d", k, v)
					return
				}
				n++
			}
		}
	})
	wg.Wait()
	for k := range uint64(writers * perW) {
		v, ok := s.Get(k)
		if deleted := (k/writers)%7 == 3; ok == deleted || ok && v != k+1 {
			t.Fatalf("key %d (deleted %v): Get = %d, %v", k, deleted, v, ok)
		}
	}
	if st := s.Stats(); st.Evictions != 0 || s.tab.Load().final {
		t.Errorf("%d evictions, final table %v: the test wants a cache that only grows", st.Evictions, s.tab.Load().final)
	}
}

// Clear gives back a grown table: the cache starts again from its first
// table and grows again.
func TestCacheClearShrinks(t *testing.T) {
	s := newTestCache(t, CacheOptions[uint64, uint64]{MaxEntries: 1 << 16, Seed: 5})
	first := s.tab.Load().n
	for k := range uint64(1 << 16) {
		s.Set(k, k)
	}
	if s.tab.Load().n == first {
		t.Fatal("the table did not grow")
	}
	s.Clear()
	if n := s.tab.Load().n; n != first || s.Len() != 0 {
		t.Fatalf("after Clear: %d buckets (first %d), Len %d", n, first, s.Len())
	}
	for k := range uint64(5000) {
		s.Set(k, k)
	}
	for k := range uint64(5000) {
		if v, ok := s.Get(k); !ok || v != k {
			t.Fatalf("refilled after Clear: Get(%d) = %d, %v", k, v, ok)
		}
	}
}
