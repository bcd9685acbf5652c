package store

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/twochoice/twochoice/internal/testutil"
)

// TestCacheStatsAgainstModel runs random Sets (with and without a TTL),
// Gets, Deletes and clock moves on small caches and checks, after every
// operation, each counter of Stats against a count the test keeps itself,
// and the cache's contents against a model of every key's expiry:
//
//   - Sets, Deletes (only those that removed a live key), Gets, Hits and
//     Misses equal the calls and their results;
//   - every entry that leaves the cache is counted once: as an expiration
//     if the model says it had expired, else as an eviction (or by the
//     Delete that removed it);
//   - Len, Stats.Entries and the table's contents agree, and so
//     Len = inserts − Evictions − Expirations − Deletes;
//   - Get and Delete find an entry, and All yields it, exactly when the
//     cache holds it and the model says it is live (an entry is expired
//     from the instant of its expiry on): a Set without a TTL takes away
//     the TTL that a SetWithTTL gave the key.
func TestCacheStatsAgainstModel(t *testing.T) {
	seed := seedFor(t)
	forEvictConfigs(t, 64, seed, func(t *testing.T, o Options) {
		clk := withFakeClock(&o)
		s := newTestCacheOf[string, int](t, o)
		rng := rand.New(rand.NewPCG(seed, 3))
		exp := make(map[string]int64) // the model: expiry of every key set (0: none)
		live := func(k string) bool {
			e, ok := exp[k]
			return ok && (e == 0 || e > clk.ns.Load())
		}
		var want Stats
		var inserts uint64
		for op := range 1000 {
			k := fmt.Sprint("k", rng.IntN(160))
			before := s.present()
			deleted := ""
			switch r := rng.IntN(20); {
			case r < 8:
				// A Set over an expired entry counts an expiration and
				// an insert, as the deletion listener reports it.
				if _, held := before[k]; !held {
					inserts++
				} else if !live(k) {
					inserts++
					want.Expirations++
				}
				if r < 3 {
					ttl := time.Duration(1+rng.IntN(4)) * time.Second
					s.SetWithTTL(k, op, ttl)
					exp[k] = clk.ns.Load() + int64(ttl)
				} else {
					s.Set(k, op)
					exp[k] = 0
				}
				want.Sets++
			case r < 16:
				_, held := before[k]
				v, ok := s.Get(k)
				if ok != (held && live(k)) {
					t.Fatalf("op %d: Get(%s) found %v; held %v, live by the model %v", op, k, ok, held, live(k))
				}
				if ok && v != before[k] {
					t.Fatalf("op %d: Get(%s) = %d, the table holds %d", op, k, v, before[k])
				}
				if ok {
					want.Hits++
				} else {
					want.Misses++
				}
			case r < 18:
				_, held := before[k]
				wantDel := held && live(k)
				if got := s.Delete(k); got != wantDel {
					t.Fatalf("op %d: Delete(%s) = %v, want %v", op, k, got, wantDel)
				}
				if wantDel {
					want.Deletes++
					deleted = k
				}
			case r < 19:
				// Half-second steps and whole-second TTLs: entries
				// often expire at exactly the clock's time.
				clk.advance(time.Duration(rng.IntN(4)) * time.Second / 2)
			default:
				n := 0
				for k, v := range s.All() {
					if v != before[k] || !live(k) {
						t.Fatalf("op %d: All yields %s = %d; held %d, live by the model %v", op, k, v, before[k], live(k))
					}
					n++
				}
				for k := range before {
					if live(k) {
						n--
					}
				}
				if n != 0 {
					t.Fatalf("op %d: All yields %d entries more than the live ones the cache holds", op, n)
				}
			}
			after := s.present()
			for g := range before {
				if _, still := after[g]; still || g == deleted {
					continue
				}
				if live(g) {
					want.Evictions++
				} else {
					want.Expirations++
				}
			}
			for g := range exp {
				if _, held := after[g]; !held {
					delete(exp, g)
				}
			}
			st := s.Stats()
			want.Gets = want.Hits + want.Misses
			want.Entries = len(after)
			want.Buckets = int(s.tab.Load().n)
			if st.Sets != want.Sets || st.Deletes != want.Deletes || st.Gets != want.Gets ||
				st.Hits != want.Hits || st.Misses != want.Misses || st.Evictions != want.Evictions ||
				st.Expirations != want.Expirations || st.Entries != want.Entries || st.Buckets != want.Buckets ||
				s.Len() != len(after) {
				t.Fatalf("op %d: stats\n%+v, want\n%+v (Len %d)", op, st, want, s.Len())
			}
			if n := inserts - st.Evictions - st.Expirations - st.Deletes; uint64(s.Len()) != n {
				t.Fatalf("op %d: Len %d, inserts − evictions − expirations − deletes = %d", op, s.Len(), n)
			}
		}
		if want.Evictions == 0 || want.Expirations == 0 || want.Deletes == 0 {
			t.Fatalf("the run did not exercise every count: %+v", want)
		}
	})
}

// TestStatsMonotonic samples Stats while two goroutines write, and checks
// that no counter ever falls between two samples, and that at idle the
// counters are exact. The writers set new keys and delete them again, so
// that a cache never fills: every insert takes an empty slot, so an insert
// whose fill Stats had not seen yet would read as an eviction and then
// stop being one.
func TestStatsMonotonic(t *testing.T) {
	for _, o := range []Options{{MaxEntries: 1 << 12, Seed: 3}, {Seed: 3}} {
		t.Run(fmt.Sprintf("MaxEntries=%d", o.MaxEntries), func(t *testing.T) {
			s := newTestStore[string, int](t, o)
			ops := 200_000
			if testing.Short() {
				ops = 50_000
				if testutil.Race {
					ops = 10_000
				}
			}
			done := make(chan struct{})
			var sets, deletes [2]uint64
			for w := range 2 {
				go func() {
					defer func() { done <- struct{}{} }()
					for i := range ops {
						k := fmt.Sprintf("w%d-%d", w, i)
						s.Set(k, i)
						sets[w]++
						if s.Delete(k) {
							deletes[w]++
						}
						s.Get(k)
					}
				}()
			}
			var prev Stats
			samples, running := 0, 2
			for running > 0 {
				select {
				case <-done:
					running--
				default:
				}
				st := s.Stats()
				samples++
				for _, c := range []struct {
					name      string
					now, then uint64
				}{
					{"Gets", st.Gets, prev.Gets}, {"Hits", st.Hits, prev.Hits}, {"Misses", st.Misses, prev.Misses},
					{"Sets", st.Sets, prev.Sets}, {"Deletes", st.Deletes, prev.Deletes},
					{"Evictions", st.Evictions, prev.Evictions}, {"Expirations", st.Expirations, prev.Expirations},
				} {
					if c.now < c.then {
						t.Fatalf("sample %d: %s fell from %d to %d\nbefore %+v\nnow    %+v", samples, c.name, c.then, c.now, prev, st)
					}
				}
				prev = st
			}
			st := s.Stats()
			t.Logf("%d samples; at idle %+v", samples, st)
			want := Stats{Gets: uint64(2 * ops), Misses: uint64(2 * ops), Sets: sets[0] + sets[1], Deletes: deletes[0] + deletes[1]}
			if st.Gets != want.Gets || st.Hits != 0 || st.Misses != want.Misses || st.Sets != want.Sets ||
				st.Deletes != want.Deletes || st.Evictions != 0 || st.Expirations != 0 || st.Entries != 0 {
				t.Fatalf("at idle %+v, want %+v", st, want)
			}
		})
	}
}

// Two stripes' counters, and stripe 0's and the Store fields before it,
// never share a cache line, whatever the alignment of counters within
// Store: a line of padding leads the array, and each stripe's counters are
// followed by more than a line of padding. The same for the eviction
// clock's stripes (ticks).
func TestStripesApartAtAnyAlignment(t *testing.T) {
	var c counters
	var st stripe
	used := unsafe.Offsetof(st.deletes) + unsafe.Sizeof(st.deletes)
	if pad := unsafe.Sizeof(st) - used; pad < cacheLine {
		t.Errorf("a stripe's counters take %d bytes and its padding %d: two stripes may share a line", used, pad)
	}
	if lead := unsafe.Offsetof(c.stripes); lead < cacheLine {
		t.Errorf("%d bytes lead the stripes: stripe 0 may share a line with the fields before it", lead)
	}
}

func TestTickStripesApartAtAnyAlignment(t *testing.T) {
	var c ticks
	var st tickStripe
	if pad := unsafe.Sizeof(st) - unsafe.Sizeof(st.n); pad < cacheLine {
		t.Errorf("a tick stripe's padding is %d bytes: two stripes may share a line", pad)
	}
	if gap := unsafe.Offsetof(c.local) - unsafe.Sizeof(c.global); gap < cacheLine {
		t.Errorf("%d bytes between the shared count and the stripes: they may share a line", gap)
	}
}

func TestStatsCount(t *testing.T) {
	s := newTestMap[int, int](t, MapOptions{Seed: 1})
	for i := range 1000 {
		s.Set(i, i)
	}
	for i := range 3000 {
		s.Get(i) // 1000 hits, 2000 misses
	}
	s.Delete(1)
	s.Delete(-1)
	st := s.Stats()
	if st.Hits != 1000 || st.Misses != 2000 || st.Gets != 3000 || st.Sets != 1000 || st.Deletes != 1 || st.Entries != 999 {
		t.Fatalf("stats: %+v", st)
	}
	if r := st.HitRatio(); r < 0.333 || r > 0.334 {
		t.Fatalf("hit ratio %v", r)
	}
}

// TestCountersAreExact: hits and misses counted by many goroutines at
// once, in their stripes, add up exactly.
func TestCountersAreExact(t *testing.T) {
	s := newTestMap[int, int](t, MapOptions{Seed: 1})
	s.Set(1, 1)
	const goroutines, n = 8, 20000
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range n {
				s.Get(1)
				s.Get(2)
			}
		})
	}
	wg.Wait()
	if st := s.Stats(); st.Hits != goroutines*n || st.Misses != goroutines*n {
		t.Fatalf("stats after %d hits and misses: %+v", goroutines*n, st)
	}
}
