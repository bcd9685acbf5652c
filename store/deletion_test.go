package store

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// The deletion listener fires exactly once for every entry that leaves the
// cache, with its cause, under concurrent Sets, Deletes, Computes, expiry
// and eviction while the table grows: every value stored (each unique) is
// at idle either in the cache or in exactly one event, so Sets = Len +
// events, and the evictions and deletions match Stats.
func TestDeletionListenerOncePerEntry(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	clk := newFakeClock()
	var mu sync.Mutex
	events := map[uint64]DeletionCause{}
	byCause := map[DeletionCause]int{}
	var twice []uint64
	s := newTestCache(t, CacheOptions[int, uint64]{MaxEntries: 3000, Seed: seed, Clock: clk,
		OnDeletion: func(ev DeletionEvent[int, uint64]) {
			mu.Lock()
			defer mu.Unlock()
			if _, dup := events[ev.Value]; dup {
				twice = append(twice, ev.Value)
			}
			events[ev.Value] = ev.Cause
			byCause[ev.Cause]++
			if ev.Key != int(ev.Value>>40) {
				t.Errorf("event of key %d carries the value of key %d", ev.Key, ev.Value>>40)
			}
		}})
	const goroutines = 4
	stored := make([][]uint64, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			for i := range uint64(40_000) {
				k := rng.IntN(8000)
				id := uint64(k)<<40 | uint64(g)<<32 | i
				switch r := rng.IntN(20); {
				case r < 10:
					s.Set(k, id)
					stored[g] = append(stored[g], id)
				case r < 13:
					s.SetWithTTL(k, id, time.Duration(1+rng.IntN(5))*time.Millisecond)
					stored[g] = append(stored[g], id)
				case r < 15:
					s.Delete(k)
				case r < 17:
					s.Compute(k, func(old uint64, found bool) (uint64, ComputeOp) {
						switch {
						case found && rng.IntN(2) == 0:
							return 0, ComputeDelete
						case rng.IntN(2) == 0:
							stored[g] = append(stored[g], id)
							return id, ComputeSet
						}
						return old, ComputeKeep
					})
				default:
					s.Get(k)
				}
				if g == 0 && i%100 == 0 {
					clk.advance(time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(twice) > 0 {
		t.Fatalf("%d values reported twice, the first %#x", len(twice), twice[0])
	}
	alive := map[uint64]bool{}
	tb := s.tab.Load()
	for i := range tb.n {
		cb := tb.cbucket(i)
		for m := ctrl(cb.b.ctrl.Load()).full(); m != 0; m &= m - 1 {
			alive[cb.b.slots[slotOf(m)].val] = true
		}
	}
	total := 0
	for g := range stored {
		for _, id := range stored[g] {
			total++
			_, gone := events[id]
			if gone == alive[id] {
				t.Fatalf("value %#x: reported %v, in the cache %v", id, gone, alive[id])
			}
		}
	}
	st := s.Stats()
	t.Logf("%d stored, %d in the cache, events %v; Stats %+v", total, s.Len(), byCause, st)
	if total != s.Len()+len(events) || st.Sets != uint64(total) {
		t.Errorf("%d stored (Stats: %d Sets); Len %d + %d events", total, st.Sets, s.Len(), len(events))
	}
	// Stats counts each cause as the listener reports it, an expired
	// entry that a Set replaced included.
	if uint64(byCause[DeletionEvicted]) != st.Evictions || uint64(byCause[DeletionDeleted]) != st.Deletes ||
		uint64(byCause[DeletionExpired]) != st.Expirations {
		t.Errorf("events %v; Stats: %d evictions, %d deletes, %d expirations", byCause, st.Evictions, st.Deletes, st.Expirations)
	}
	for _, c := range []DeletionCause{DeletionReplaced, DeletionDeleted, DeletionEvicted, DeletionExpired} {
		if byCause[c] == 0 {
			t.Errorf("no event of cause %v: the test wants every cause", c)
		}
	}
}

// The listener is called after the locks are released: it may use the
// cache, even for the key whose entry left.
func TestDeletionListenerMayUseCache(t *testing.T) {
	var s *Cache[string, int]
	var got []string
	s = newTestCache(t, CacheOptions[string, int]{MaxEntries: 100, Seed: 1,
		OnDeletion: func(ev DeletionEvent[string, int]) {
			got = append(got, ev.Key+":"+ev.Cause.String())
			if ev.Cause == DeletionDeleted {
				s.Set(ev.Key+"-tombstone", ev.Value)
				s.Get(ev.Key)
			}
		}})
	s.Set("a", 1)
	s.Set("a", 2)
	s.Delete("a")
	if v, ok := s.Get("a-tombstone"); !ok || v != 2 {
		t.Errorf("the listener's Set: %d, %v", v, ok)
	}
	want := []string{"a:replaced", "a:deleted"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("events %v, want %v", got, want)
	}
}
