package store

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twochoice/twochoice/bucket"
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
