package store

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
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
		s := newTestStore[string, int](t, o)
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
				if _, held := before[k]; !held {
					inserts++
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
			want.Buckets = int(s.tabs.Load().cur.n)
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
