package store

import (
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
)

// evictConfigs are a few cache configurations, one per kind of candidate
// set: one choice, d-choice, go-left (parts), double hashing and d > 2.
func evictConfigs(maxE int) []Options {
	return []Options{
		{Placement: bucket.OneChoice, Choices: 1, MaxEntries: maxE},
		{Placement: bucket.DChoice, Choices: 2, MaxEntries: maxE},
		{Placement: bucket.GoLeft, Choices: 2, MaxEntries: maxE},
		{Placement: bucket.DoubleHash, Choices: 2, MaxEntries: maxE},
		{Placement: bucket.DChoice, Choices: 3, BucketSize: 4, MaxEntries: maxE},
	}
}

// forEvictConfigs runs fn as a subtest, named after its options, for each
// of evictConfigs(maxE) with the given seed.
func forEvictConfigs(t *testing.T, maxE int, seed uint64, fn func(t *testing.T, o Options)) {
	for _, o := range evictConfigs(maxE) {
		o.Seed = seed
		t.Run(name(o), func(t *testing.T) { fn(t, o) })
	}
}

// withFakeClock gives o a fake clock of its own, and returns it.
func withFakeClock(o *Options) *fakeClock {
	clk := newFakeClock()
	o.Clock = clk
	return clk
}

// TestEvictionTakesTheOldest: keys that are set once and never read have
// no frequency to tell them apart, so the victim is the candidates' least
// recently set entry. Of a stream of distinct keys through a cache, the
// most recent ones must then all still be there: one set within the last
// tenth of the cache's capacity is evicted only if it is the oldest of all
// its candidates' slots, which takes the sketch's false positives giving
// older entries a bonus: with one choice (8 slots) a key or two in a
// hundred, in 1 run in 7; an eviction of the newest entry instead loses a
// third of them, and passes every read-your-writes check, since a Set
// never evicts its own key.
func TestEvictionTakesTheOldest(t *testing.T) {
	seed := seedFor(t)
	const maxE = 1000
	forEvictConfigs(t, maxE, seed, func(t *testing.T, o Options) {
		s := newTestStore[uint64, int](t, o)
		rng := rand.New(rand.NewPCG(seed, 2))
		keys := make([]uint64, 8*maxE)
		for i := range keys {
			keys[i] = rng.Uint64()
			s.Set(keys[i], i)
		}
		held := s.present()
		recent := keys[len(keys)-maxE/10:]
		lost := 0
		for _, k := range recent {
			if _, ok := held[k]; !ok {
				lost++
			}
		}
		if lost > len(recent)/10 {
			t.Fatalf("%d of the %d most recently set keys were evicted", lost, len(recent))
		}
		// And the oldest keys are gone: only entries hit since could
		// have outlived 7 capacities' worth of inserts.
		for _, k := range keys[:maxE] {
			if _, ok := held[k]; ok {
				t.Fatalf("key %d, set first and never read, outlived %d inserts into a cache of %d", k, len(keys)-maxE, maxE)
			}
		}
	})
}

// TestExpiredAtExactlyNowIsAVictim: an entry whose expiry is exactly the
// clock's time has expired (Get misses it), so a new key that needs room
// must take its slot as an expiration, not evict a live entry.
func TestExpiredAtExactlyNowIsAVictim(t *testing.T) {
	forEvictConfigs(t, 64, 11, func(t *testing.T, o Options) {
		clk := withFakeClock(&o)
		s := newTestStore[int, int](t, o)
		// The clock stands still: every entry expires at the same
		// instant, and the cache ends full.
		for k := range 4 * o.MaxEntries {
			s.SetWithTTL(k, k, time.Second)
		}
		if s.Len() != o.MaxEntries {
			t.Fatalf("Len %d after filling, want %d", s.Len(), o.MaxEntries)
		}
		clk.advance(time.Second) // now == every entry's expiry
		before := s.Stats()
		const inserts = 10
		for k := range inserts {
			s.Set(-1-k, k)
		}
		after := s.Stats()
		if ev, ex := after.Evictions-before.Evictions, after.Expirations-before.Expirations; ev != 0 || ex != inserts {
			t.Fatalf("%d new keys into a full cache of entries expiring now: %d evictions, %d expirations; want 0 and %d",
				inserts, ev, ex, inserts)
		}
	})
}

// holds reports whether a cache's table holds k (expired or not), looking
// only in k's candidates: cheaper than present for one key.
func (s *Store[K, V]) holds(k K) bool {
	t := s.tabs.Load().cur
	h := s.hash(k)
	var c [hashfn.MaxChoices]uint64
	for _, i := range t.cands(h, &c) {
		if t.bucket(i).find(k, tagOf(h)) >= 0 {
			return true
		}
	}
	return false
}

// TestSketchRemembersEvictedHotKeys: a key hit twice and then evicted
// leaves its count in the sketch, so that it comes back with it (a
// one-off comes back with nothing). The cache is large and the test
// short, so the sketch has neither halved nor filled up when the key is
// evicted: without the raise, its estimate would be the 1 of its insert,
// give or take a collision.
func TestSketchRemembersEvictedHotKeys(t *testing.T) {
	seed := seedFor(t)
	const maxE = 4096
	forEvictConfigs(t, maxE, seed, func(t *testing.T, o Options) {
		s := newTestStore[uint64, int](t, o)
		rng := rand.New(rand.NewPCG(seed, 4))
		const hot = 1 << 63
		s.Set(hot, 0)
		for range 2 {
			if _, ok := s.Get(hot); !ok {
				t.Fatal("the hot key missed at once")
			}
		}
		for i := range 8 * maxE {
			s.Set(rng.Uint64()>>1, i) // one-offs, never the hot key
			if s.holds(hot) {
				continue
			}
			if g := s.sk.gen.Load(); g != 0 {
				t.Fatalf("the sketch halved (generation %d) before the hot key was evicted", g)
			}
			// Hit twice: evicted with a count of 2, raised to 3.
			if est := s.sk.estimate(s.hash(hot)); est < 3 {
				t.Fatalf("evicted after %d inserts with 2 hits, the hot key's estimate is %d, want 3 or more", i+1, est)
			}
			return
		}
		t.Fatalf("the hot key outlived %d one-off keys", 8*maxE)
	})
}

// TestCacheEvictsOnlyWhenCandidatesFull: a new key takes a free slot if
// any of its candidates has one, and evicts only when all are full; a
// bucket with one slot short of the rest (cacheSize) counts as full when
// its slots are. MaxEntries 101 leaves short buckets in every rule.
func TestCacheEvictsOnlyWhenCandidatesFull(t *testing.T) {
	seed := seedFor(t)
	forEvictConfigs(t, 101, seed, func(t *testing.T, o Options) {
		s := newTestStore[uint64, int](t, o)
		tb := s.tabs.Load().cur
		if tb.short == 0 {
			t.Fatalf("no short bucket: %d buckets of %d slots", tb.n, tb.size)
		}
		rng := rand.New(rand.NewPCG(seed, 5))
		for i := range 20 * o.MaxEntries {
			k := rng.Uint64()
			var c [hashfn.MaxChoices]uint64
			room := false
			for _, b := range tb.cands(s.hash(k), &c) {
				if int(tb.load(b)) < slotsOf(tb.capAt(b)) {
					room = true
				}
			}
			before := s.Stats().Evictions
			s.Set(k, i)
			if ev := s.Stats().Evictions - before; room && ev != 0 {
				t.Fatalf("insert %d: evicted an entry while a candidate of the new key had a free slot", i)
			}
		}
	})
}

// The policy word's fields, its halving by generation, and the wraps that
// evict.go documents: ages mod 2^20 units, generations mod 64.
func TestPolicyWord(t *testing.T) {
	w := packAcc(5, 3, 2)
	if w&liveBit == 0 || w&usedBit != 0 {
		t.Fatalf("packAcc(5, 3, 2) = %#x: want the live bit and not the used bit", w)
	}
	for _, c := range []struct {
		now  uint64
		want uint32
	}{{5, 0}, {9, 4}, {tickMask + 5, tickMask}, {tickMask + 6, 0}, {1 << 40, (1<<40 - 5) & tickMask}} {
		if got := ageOf(w, c.now); got != c.want {
			t.Errorf("ageOf(tick 5, now %d) = %d, want %d", c.now, got, c.want)
		}
	}
	for _, c := range []struct {
		gen  uint32
		want uint8
	}{{2, 3}, {3, 1}, {4, 0}, {9, 0}, {10, 0}, {66, 3}, {67, 1}} {
		if got := hitsOf(w, c.gen); got != c.want {
			t.Errorf("hitsOf(3 hits in gen 2, gen %d) = %d, want %d", c.gen, got, c.want)
		}
	}
	if got := hitsOf(packAcc(0, 15, 63), 64); got != 7 {
		t.Errorf("15 hits in gen 63, read in gen 64: %d, want 7 (one halving across the wrap)", got)
	}
	a := accessed(w, 7, 3)
	if hitsOf(a, 3) != 2 || ageOf(a, 7) != 0 || a&usedBit == 0 || a&liveBit == 0 {
		t.Errorf("accessed(3 hits in gen 2, now 7, gen 3) = %#x: want 1+1 hits, age 0, used and live", a)
	}
	top := accessed(packAcc(5, hitsCap, 2), 5, 2)
	if hitsOf(top, 2) != hitsCap {
		t.Errorf("accessed at the cap: %d hits, want %d", hitsOf(top, 2), hitsCap)
	}
	if !fresh(top, 5+3, 2, 4) || fresh(top, 5+4, 2, 4) || fresh(top, 5, 3, 4) || fresh(w, 5, 2, 4) {
		t.Errorf("fresh: want true only under the slack, in the word's generation, at the cap")
	}
	if w := inserted(1<<21+9, 20, 2); hitsOf(w, 2) != hitsCap || ageOf(w, 1<<21+9) != 0 || w&usedBit != 0 {
		t.Errorf("inserted(now, 20 hits, gen 2) = %#x: want the hits capped, age 0, not used", w)
	}
	for _, c := range []struct {
		max  int
		unit uint8
	}{{1, 0}, {511, 0}, {1023, 0}, {1024, 1}, {2000, 1}, {100_000, 7}, {1 << 20, 11}} {
		slack := recencySlack(c.max)
		if got := tickUnit(c.max); got != c.unit || slack >= 2 && 2<<got > slack {
			t.Errorf("tickUnit(%d) = %d, want %d (slack %d)", c.max, got, c.unit, recencySlack(c.max))
		}
	}
}

// A cache bucket's header (policy words, control word, sync word) is the
// 48 bytes bucket.go describes: on one cache line whenever the bucket
// starts at byte 0 or 16 of a line. An unbounded store's bucket has a
// 16-byte header.
func TestBucketHeader(t *testing.T) {
	var cb cacheBucket[string, int64]
	if off := unsafe.Offsetof(cb.b) + unsafe.Offsetof(cb.b.slots); off != 48 {
		t.Fatalf("the slots start at byte %d of a cache bucket, want 48", off)
	}
	if off := unsafe.Offsetof(cb.b.ctrl); off != 0 || unsafe.Offsetof(cb.b) != 32 {
		t.Fatalf("the control word is at byte %d of the bucket, %d of the cache bucket; want 0 and 32", off, unsafe.Offsetof(cb.b))
	}
	if off := unsafe.Offsetof(cb.b.slots); off != 16 {
		t.Fatalf("the slots start at byte %d of a bucket, want 16", off)
	}
}

// TestCachePrefetch: a cache whose buckets pass a core's L2 prefetches
// its candidates' lines on a Get and a Set (bigCacheTable); a small one
// does not, and neither does a build without the prefetch's assembly.
func TestCachePrefetch(t *testing.T) {
	for _, c := range []struct {
		max  int
		want bool
	}{
		{1 << 20 / 10, havePrefetch}, // 13,108 buckets of 240 bytes: 3 MiB
		{1 << 20 / 100, false},       // 0.3 MiB
		{1 << 10, false},
	} {
		s, err := New[string, int64](Options{Seed: 1, MaxEntries: c.max})
		if err != nil {
			t.Fatal(err)
		}
		tb := s.tabs.Load().cur
		bytes := tb.n * uint64(unsafe.Sizeof(cacheBucket[string, int64]{}))
		if tb.prefetch != c.want {
			t.Errorf("MaxEntries %d (%d bytes of buckets): prefetch %v, want %v", c.max, bytes, tb.prefetch, c.want)
		}
	}
	// An unbounded store keeps get2's own threshold (bigTable).
	s, err := New[string, int64](Options{Seed: 1, SizeHint: 1 << 20 / 10})
	if err != nil {
		t.Fatal(err)
	}
	if tb := s.tabs.Load().cur; tb.prefetch != bigTable[string, int64](tb.n) {
		t.Errorf("unbounded store of %d buckets: prefetch %v, want bigTable's %v", tb.n, tb.prefetch, !tb.prefetch)
	}
}
