package store

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// eventLog records a cache's deletion events, by value (every value the
// tests store is unique).
type eventLog struct {
	mu      sync.Mutex
	byValue map[uint64]DeletionCause
	byCause map[DeletionCause]int
	twice   []uint64
}

func newEventLog() *eventLog {
	return &eventLog{byValue: map[uint64]DeletionCause{}, byCause: map[DeletionCause]int{}}
}

func (l *eventLog) listen(ev DeletionEvent[uint64, uint64]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, dup := l.byValue[ev.Value]; dup {
		l.twice = append(l.twice, ev.Value)
	}
	l.byValue[ev.Value] = ev.Cause
	l.byCause[ev.Cause]++
}

// A full cache of 10,000 entries shrunk to 1,000 holds at most 1,000,
// each with the value it had; every entry it no longer holds is reported
// once to the listener as evicted and counted in Stats.Evictions. Grown
// back to 10,000 it keeps what it holds, grows into the new bound as
// entries arrive, and fills it.
func TestSetMaximumShrinkAndGrow(t *testing.T) {
	seed := seedFor(t)
	for _, o := range []Options{
		{MaxEntries: 10_000},
		{MaxEntries: 10_000, Choices: 3, BucketSize: 4},
	} {
		t.Run(name(o), func(t *testing.T) {
			log := newEventLog()
			o.Seed = seed
			co := cacheOptionsOf[uint64, uint64](&o)
			co.OnDeletion = log.listen
			s := newTestCache(t, co)
			rng := rand.New(rand.NewPCG(seed, 1))
			next := uint64(0)
			fill := func(n int) {
				for range n {
					next++
					s.Set(next, next<<20|uint64(rng.IntN(1<<20)))
				}
			}
			fill(40_000)
			if s.Len() < 9_900 {
				t.Fatalf("full: Len %d", s.Len())
			}
			before := s.present()
			st0 := s.Stats()
			log.mu.Lock()
			ev0 := log.byCause[DeletionEvicted]
			clear(log.byValue)
			log.mu.Unlock()

			if err := s.SetMaximum(1_000); err != nil {
				t.Fatal(err)
			}
			after := s.present()
			st1 := s.Stats()
			t.Logf("shrunk from %d to %d entries; Stats %+v", len(before), len(after), st1)
			if s.Len() > 1_000 || s.Len() < 990 || len(after) != s.Len() {
				t.Errorf("shrunk to 1,000: Len %d, holds %d", s.Len(), len(after))
			}
			for k, v := range after {
				if before[k] != v {
					t.Fatalf("key %d: %d after the shrink, %d before", k, v, before[k])
				}
			}
			log.mu.Lock()
			if len(log.twice) > 0 {
				t.Errorf("%d values reported twice", len(log.twice))
			}
			for k, v := range before {
				_, kept := after[k]
				c, reported := log.byValue[v]
				if kept == reported || reported && c != DeletionEvicted {
					t.Fatalf("key %d: kept %v, reported %v (%v)", k, kept, reported, c)
				}
			}
			evicted := log.byCause[DeletionEvicted] - ev0
			log.mu.Unlock()
			if evicted != len(before)-len(after) || st1.Evictions-st0.Evictions != uint64(evicted) {
				t.Errorf("%d entries left, %d reported evicted, Stats counts %d evictions", len(before)-len(after), evicted, st1.Evictions-st0.Evictions)
			}
			if got := s.Options().MaxEntries; got != 1_000 {
				t.Errorf("Options().MaxEntries %d after SetMaximum(1000)", got)
			}
			if r := s.Report(); r.MaxEntries != 1_000 || r.Entries != s.Len() {
				t.Errorf("Report: MaxEntries %d, Entries %d", r.MaxEntries, r.Entries)
			}
			if err := s.checkInvariants(); err != nil {
				t.Fatal(err)
			}

			// Back to 10,000: nothing leaves, and the table grows into
			// the bound as a new cache's does.
			if err := s.SetMaximum(10_000); err != nil {
				t.Fatal(err)
			}
			if got := s.present(); len(got) != len(after) {
				t.Errorf("grown: holds %d, held %d", len(got), len(after))
			}
			if s.tab.Load().final {
				t.Errorf("grown to 10,000 with %d entries: the table is already the final one", s.Len())
			}
			if err := s.checkInvariants(); err != nil {
				t.Fatal(err)
			}
			fill(40_000)
			if s.Len() > 10_000 || s.Len() < 9_900 || !s.tab.Load().final {
				t.Errorf("refilled to 10,000: Len %d, final table %v", s.Len(), s.tab.Load().final)
			}
			if got := s.Options().MaxEntries; got != 10_000 {
				t.Errorf("Options().MaxEntries %d after SetMaximum(10000)", got)
			}
		})
	}
}

// A bound NewCache would refuse is an error wrapping ErrOptions, and
// changes nothing.
func TestSetMaximumRefusesBadBounds(t *testing.T) {
	s := newTestCache(t, CacheOptions[int, int]{MaxEntries: 100, Seed: 1})
	for i := range 300 {
		s.Set(i, i)
	}
	tb, n := s.tab.Load(), s.Len()
	for _, bad := range []int{0, -1, 1, MaxCacheEntries + 1} {
		if err := s.SetMaximum(bad); !errors.Is(err, ErrOptions) {
			t.Errorf("SetMaximum(%d) = %v, want ErrOptions", bad, err)
		}
		if s.tab.Load() != tb || s.Len() != n || s.Options().MaxEntries != 100 {
			t.Errorf("SetMaximum(%d) changed the cache: Len %d, bound %d", bad, s.Len(), s.Options().MaxEntries)
		}
	}
	if err := s.SetMaximum(100); err != nil || s.tab.Load() != tb {
		t.Errorf("SetMaximum to the bound in force: %v, table replaced %v", err, s.tab.Load() != tb)
	}
}

// Shrinking evicts by the policy: keys read again and again outlive keys
// set once and never read.
func TestSetMaximumKeepsUsedKeys(t *testing.T) {
	seed := seedFor(t)
	s := newTestCache(t, CacheOptions[uint64, uint64]{MaxEntries: 10_000, Seed: seed})
	const hot = 1_000
	for k := range uint64(hot) {
		s.Set(k, k)
	}
	// Cold keys arrive between rounds of reads of the hot ones, so that
	// the hot keys show gaps between their uses.
	for r := range uint64(9) {
		for k := range uint64(hot) {
			s.Set(hot+r*hot+k, k)
		}
		for k := range uint64(hot) {
			s.Get(k)
		}
	}
	if err := s.SetMaximum(2_000); err != nil {
		t.Fatal(err)
	}
	kept := 0
	for k := range uint64(hot) {
		if _, ok := s.Peek(k); ok {
			kept++
		}
	}
	t.Logf("%d of %d hot keys kept in 2,000 entries (a random choice keeps about %d)", kept, hot, hot/5)
	if kept < hot*95/100 {
		t.Errorf("%d of %d hot keys kept", kept, hot)
	}
}

// Writers and readers go on while the bound moves up and down: no value is
// lost that the cache did not report, none is reported twice, no Get
// returns another key's value, and the invariants hold at the end.
func TestSetMaximumConcurrent(t *testing.T) {
	seed := seedFor(t)
	clk := newFakeClock()
	log := newEventLog()
	s := newTestCache(t, CacheOptions[uint64, uint64]{MaxEntries: 4_000, Seed: seed, Clock: clk, OnDeletion: log.listen})
	const goroutines = 4
	n := 30_000
	if testing.Short() {
		n = 10_000
	}
	stored := make([][]uint64, goroutines)
	var deleted [goroutines]int
	var wg sync.WaitGroup
	done := make(chan struct{})
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			for i := range n {
				k := uint64(rng.IntN(12_000))
				id := k<<40 | uint64(g)<<32 | uint64(i)
				switch r := rng.IntN(10); {
				case r < 5:
					s.Set(k, id)
					stored[g] = append(stored[g], id)
				case r < 6:
					s.SetWithTTL(k, id, time.Duration(1+rng.IntN(3))*time.Millisecond)
					stored[g] = append(stored[g], id)
				case r < 7:
					if s.Delete(k) {
						deleted[g]++
					}
				default:
					if v, ok := s.Get(k); ok && v>>40 != k {
						t.Errorf("Get(%d) returned the value of key %d", k, v>>40)
					}
				}
				if g == 0 && i%200 == 0 {
					clk.advance(time.Millisecond)
				}
			}
		})
	}
	var resizes int
	var rwg sync.WaitGroup
	rwg.Go(func() {
		rng := rand.New(rand.NewPCG(seed, 99))
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := s.SetMaximum(500 + rng.IntN(8_000)); err != nil {
				t.Error(err)
				return
			}
			resizes++
			runtime.Gosched()
		}
	})
	wg.Wait()
	close(done)
	rwg.Wait()
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.twice) > 0 {
		t.Fatalf("%d values reported twice, the first %#x", len(log.twice), log.twice[0])
	}
	alive := map[uint64]bool{}
	for _, v := range s.present() {
		alive[v] = true
	}
	total := 0
	for g := range stored {
		for _, id := range stored[g] {
			total++
			_, gone := log.byValue[id]
			if gone == alive[id] {
				t.Fatalf("value %#x: reported %v, in the cache %v", id, gone, alive[id])
			}
		}
	}
	st := s.Stats()
	t.Logf("%d resizes; %d stored, %d in the cache, events %v; Stats %+v", resizes, total, s.Len(), log.byCause, st)
	if resizes == 0 {
		t.Error("no resize ran during the writes")
	}
	if total != s.Len()+len(log.byValue) || st.Sets != uint64(total) {
		t.Errorf("%d stored (Stats: %d Sets); Len %d + %d events", total, st.Sets, s.Len(), len(log.byValue))
	}
	dels := 0
	for _, d := range deleted {
		dels += d
	}
	if uint64(log.byCause[DeletionEvicted]) != st.Evictions || log.byCause[DeletionDeleted] != dels || st.Deletes != uint64(dels) {
		t.Errorf("events %v, %d Deletes returned true; Stats: %d evictions, %d deletes", log.byCause, dels, st.Evictions, st.Deletes)
	}
	if s.Len() > s.Options().MaxEntries {
		t.Errorf("Len %d above the bound %d", s.Len(), s.Options().MaxEntries)
	}
}

// A Save after SetMaximum records the new bound, and OpenCache restores
// it.
func TestSetMaximumSaved(t *testing.T) {
	s := newTestCache(t, CacheOptions[uint64, uint64]{MaxEntries: 5_000, Seed: 3})
	for k := range uint64(20_000) {
		s.Set(k, k)
	}
	if err := s.SetMaximum(700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.snap")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	r, err := OpenCache[uint64, uint64](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkAtEnd(t, r)
	if got := r.Options().MaxEntries; got != 700 {
		t.Errorf("restored bound %d, want 700", got)
	}
	if r.Len() != s.Len() {
		t.Errorf("restored %d entries of %d", r.Len(), s.Len())
	}
	for k, v := range s.All() {
		if got, ok := r.Peek(k); !ok || got != v {
			t.Fatalf("key %d: restored %d, %v; saved %d", k, got, ok, v)
		}
	}
}
