package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingRecorder counts what a cache records.
type countingRecorder struct {
	hits, misses       atomic.Int64
	evicted, expired   atomic.Int64
	weight             atomic.Int64
	loads, loadFails   atomic.Int64
	loadTime           atomic.Int64
	otherCause, badArg atomic.Int64
}

func (r *countingRecorder) RecordHits(n int) {
	if n <= 0 {
		r.badArg.Add(1)
	}
	r.hits.Add(int64(n))
}

func (r *countingRecorder) RecordMisses(n int) {
	if n <= 0 {
		r.badArg.Add(1)
	}
	r.misses.Add(int64(n))
}

func (r *countingRecorder) RecordEviction(cause DeletionCause, weight uint32) {
	switch cause {
	case DeletionEvicted:
		r.evicted.Add(1)
	case DeletionExpired:
		r.expired.Add(1)
	default:
		r.otherCause.Add(1)
	}
	r.weight.Add(int64(weight))
}

func (r *countingRecorder) RecordLoadSuccess(d time.Duration) {
	r.loads.Add(1)
	r.loadTime.Add(int64(d))
}

func (r *countingRecorder) RecordLoadFailure(d time.Duration) {
	r.loadFails.Add(1)
	r.loadTime.Add(int64(d))
}

// The recorder hears of every hit, miss, eviction, expiration and load,
// once: under concurrent Gets, GetOrSets, GetOrLoads (some failing, some
// panicking), bulk loads, Sets with and without TTLs, Deletes and
// Computes on a cache that evicts and whose table grows, its counts equal
// the hits and misses that the calls' results show, the loader calls the
// test made, and Stats; its evictions by cause equal Stats' and the
// deletion listener's.
func TestStatsRecorderCounts(t *testing.T) {
	seed := seedFor(t)
	clk := newFakeClock()
	rec := &countingRecorder{}
	var mu sync.Mutex
	events := map[DeletionCause]int{}
	s := newTestCache(t, CacheOptions[int, int]{MaxEntries: 3000, Seed: seed, Clock: clk, StatsRecorder: rec,
		OnDeletion: func(ev DeletionEvent[int, int]) {
			mu.Lock()
			events[ev.Cause]++
			mu.Unlock()
		}})
	if s.Options().StatsRecorder != rec {
		t.Error("Options does not give the recorder back")
	}
	errLoad := errors.New("no such row")
	const goroutines = 4
	var hits, misses, loads, loadFails atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			ctx := context.Background()
			count := func(found bool) {
				if found {
					hits.Add(1)
				} else {
					misses.Add(1)
				}
			}
			for i := range 30_000 {
				k := rng.IntN(6000)
				switch r := rng.IntN(40); {
				case r < 12:
					s.Set(k, i)
				case r < 15:
					s.SetWithTTL(k, i, time.Duration(1+rng.IntN(5))*time.Millisecond)
				case r < 17:
					s.Delete(k)
				case r < 18:
					s.Compute(k, func(old int, found bool) (int, ComputeOp) {
						if found {
							return 0, ComputeDelete
						}
						return i, ComputeSet
					})
				case r < 19:
					s.Peek(k)
				case r < 22:
					_, loaded := s.GetOrSet(k, i)
					count(loaded)
				case r < 26:
					// Loads of keys no other goroutine loads, so that each
					// call either hits or runs its own loader.
					k := 10_000 + g*100_000 + rng.IntN(3000)
					fail, panics := rng.IntN(5) == 0, rng.IntN(20) == 0
					called := false
					func() {
						defer func() {
							if p := recover(); p != nil && !panics {
								panic(p)
							}
						}()
						_, _ = s.GetOrLoad(ctx, k, func(context.Context, int) (int, error) {
							called = true
							switch {
							case panics:
								panic("loader")
							case fail:
								return 0, errLoad
							}
							return k, nil
						})
					}()
					count(!called)
					if called {
						if fail || panics {
							loadFails.Add(1)
						} else {
							loads.Add(1)
						}
					}
				case r < 27:
					// A bulk load counts one call of the loader, and a Get
					// of each key.
					base := 20_000 + g*100_000 + rng.IntN(3000)
					keys := []int{base, base + 1, base + 2}
					called := false
					missed := 0
					if _, err := s.GetOrLoadAll(ctx, keys, func(_ context.Context, ks []int) (map[int]int, error) {
						called = true
						missed = len(ks)
						out := map[int]int{}
						for _, k := range ks {
							out[k] = k
						}
						return out, nil
					}); err != nil {
						t.Error(err)
					}
					if called {
						loads.Add(1)
					}
					// No other goroutine uses these keys: the loader gets
					// the ones that Get missed.
					hits.Add(int64(len(keys) - missed))
					misses.Add(int64(missed))
				default:
					_, found := s.Get(k)
					count(found)
				}
				if g == 0 && i%100 == 0 {
					clk.advance(time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	st := s.Stats()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("Stats %+v; listener %v", st, events)
	if rec.badArg.Load() != 0 || rec.otherCause.Load() != 0 {
		t.Errorf("%d counts not above 0, %d evictions of a cause other than evicted or expired", rec.badArg.Load(), rec.otherCause.Load())
	}
	if rec.hits.Load() != hits.Load() || rec.misses.Load() != misses.Load() || st.Hits != uint64(hits.Load()) || st.Misses != uint64(misses.Load()) {
		t.Errorf("hits: recorder %d, Stats %d, calls %d; misses: recorder %d, Stats %d, calls %d",
			rec.hits.Load(), st.Hits, hits.Load(), rec.misses.Load(), st.Misses, misses.Load())
	}
	if rec.evicted.Load() != int64(st.Evictions) || rec.evicted.Load() != int64(events[DeletionEvicted]) || st.Evictions == 0 {
		t.Errorf("evictions: recorder %d, Stats %d, listener %d", rec.evicted.Load(), st.Evictions, events[DeletionEvicted])
	}
	// The listener also reports, as expired, the expired entries that a
	// Set replaced, which Stats does not count.
	if rec.expired.Load() != int64(st.Expirations) || rec.expired.Load() > int64(events[DeletionExpired]) || st.Expirations == 0 {
		t.Errorf("expirations: recorder %d, Stats %d, listener %d", rec.expired.Load(), st.Expirations, events[DeletionExpired])
	}
	if rec.weight.Load() != rec.evicted.Load()+rec.expired.Load() {
		t.Errorf("evicted weight %d for %d entries of weight 1", rec.weight.Load(), rec.evicted.Load()+rec.expired.Load())
	}
	if rec.loads.Load() != loads.Load() || rec.loadFails.Load() != loadFails.Load() ||
		st.LoadSuccesses != uint64(loads.Load()) || st.LoadFailures != uint64(loadFails.Load()) || loadFails.Load() == 0 {
		t.Errorf("loads: recorder %d, Stats %d, calls %d; failures: recorder %d, Stats %d, calls %d",
			rec.loads.Load(), st.LoadSuccesses, loads.Load(), rec.loadFails.Load(), st.LoadFailures, loadFails.Load())
	}
	if st.LoadTime != time.Duration(rec.loadTime.Load()) || st.LoadTime <= 0 {
		t.Errorf("load time: Stats %v, recorder %v", st.LoadTime, time.Duration(rec.loadTime.Load()))
	}
}

// A cache without a recorder counts the same in Stats, and a recorder
// changes nothing of Get's and Set's allocations.
func TestStatsRecorderAllocs(t *testing.T) {
	rec := &countingRecorder{}
	s := newTestCache(t, CacheOptions[string, int]{MaxEntries: 100, Seed: 1, StatsRecorder: rec})
	keys := []string{"a", "b", "c", "d"}
	for _, k := range keys {
		s.Set(k, 1)
	}
	n := 0
	if a := testing.AllocsPerRun(200, func() {
		k := keys[n%len(keys)]
		n++
		s.Get(k)
		s.Get("absent")
		s.Set(k, n)
	}); a != 0 {
		t.Errorf("Get and Set with a recorder allocate %v times", a)
	}
	if rec.hits.Load() == 0 || rec.misses.Load() != rec.hits.Load() {
		t.Errorf("recorder: %d hits, %d misses", rec.hits.Load(), rec.misses.Load())
	}
}

// TestStatsRecorderWeights: in a cache bounded by weight, the recorder
// hears each evicted or expired entry's weight, so that the weights it
// sums equal those of the values the deletion listener reports evicted or
// expired, whichever path removed them: a Set's victim, the sampled
// evictions of the bound, a Get or a Delete that meets an expired entry,
// RemoveExpired, a Compute, a value too heavy to store and the copy into
// a smaller table.
func TestStatsRecorderWeights(t *testing.T) {
	seed := seedFor(t)
	r := rand.New(rand.NewPCG(seed, 11))
	rec := new(countingRecorder)
	clk := newFakeClock()
	var mu sync.Mutex
	var listened int64
	c := newTestCache(t, CacheOptions[string, []byte]{
		MaxEntries: 2000, MaxWeight: 400 * 64, Weigher: byteLen, Seed: seed,
		Clock: clk, DefaultTTL: time.Minute, StatsRecorder: rec,
		OnDeletion: func(ev DeletionEvent[string, []byte]) {
			if ev.Cause == DeletionEvicted || ev.Cause == DeletionExpired {
				mu.Lock()
				listened += int64(len(ev.Value))
				mu.Unlock()
			}
		},
	})
	key := func() string { return fmt.Sprint("k", r.IntN(3000)) }
	for round := range 20 {
		for range 500 {
			switch x := r.IntN(100); {
			case x < 60:
				c.Set(key(), make([]byte, 1+r.IntN(127)))
			case x < 65:
				c.SetWithTTL(key(), make([]byte, 1+r.IntN(127)), time.Duration(1+r.IntN(30))*time.Second)
			case x < 85:
				c.Get(key())
			case x < 92:
				c.Delete(key())
			case x < 97:
				c.Compute(key(), func(old []byte, ok bool) ([]byte, ComputeOp) {
					if ok && len(old) > 64 {
						return nil, ComputeDelete
					}
					return make([]byte, 1+r.IntN(127)), ComputeSet
				})
			default:
				c.Set(key(), make([]byte, 400*64+1)) // heavier than the bound
			}
		}
		clk.advance(time.Duration(r.IntN(20)) * time.Second)
		switch round {
		case 7:
			c.RemoveExpired()
		case 12:
			if err := c.SetMaximum(500); err != nil {
				t.Fatal(err)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if rec.evicted.Load() == 0 || rec.expired.Load() == 0 {
		t.Fatalf("seed %d: %d evictions and %d expirations recorded; the test needs both", seed, rec.evicted.Load(), rec.expired.Load())
	}
	if got := rec.weight.Load(); got != listened {
		t.Errorf("seed %d: the recorder heard of %d bytes evicted or expired (%d entries), the listener of %d", seed, got, rec.evicted.Load()+rec.expired.Load(), listened)
	}
}
