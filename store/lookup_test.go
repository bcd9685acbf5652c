package store

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/keyset"
)

// get2Options are the stores the get2 tests run: one of each candidate
// scheme (parts, independent, double hashing), d = 2.
var get2Options = []Options{
	{Seed: 1, Placement: bucket.GoLeft},
	{Seed: 2, Placement: bucket.DChoice},
	{Seed: 3, Placement: bucket.DoubleHash},
}

// skipWithoutGet2 skips a test of get2's optimistic path in builds that
// do not take it.
func skipWithoutGet2(t *testing.T) {
	t.Helper()
	if !optimisticReads {
		t.Skip("purego build: slots are read under the bucket's lock, not by get2's optimistic path")
	}
}

// TestGet2TagFalsePositives: get2 reads a candidate's slots only when its
// tags match. A key in the second candidate whose first candidate holds
// another key with the same tag must still be found: get2 must go on to
// the second candidate after a false match in the first, not stop at the
// first candidate whose tags matched. The test checks that the store holds
// keys in each candidate and keys behind a false match, so that it
// exercises each path, for each candidate scheme (parts, independent,
// double hashing).
func TestGet2TagFalsePositives(t *testing.T) {
	skipWithoutGet2(t)
	for _, o := range get2Options {
		s := newTestMapOf[string, int](t, o)
		keys := keyset.Synthetic(20000, 3)
		for i, k := range keys {
			s.Set(k, i)
		}
		tb := s.tabs.Load().cur
		if tb.d != 2 || tb.lay.words == 0 {
			t.Fatalf("options %+v: want the optimistic two-choice path", o)
		}
		var in0, in1, falsePos int
		for i, k := range keys {
			h := s.hash(k)
			tag := tagOf(h)
			c0, c1 := tb.cand2(h)
			switch {
			case tb.bucket(c0).find(k, tag) >= 0:
				in0++
			case tb.bucket(c1).find(k, tag) >= 0:
				in1++
				if ctrl(tb.bucket(c0).ctrl.Load()).match(tag) != 0 {
					falsePos++
				}
			}
			if v, ok := s.Get(k); !ok || v != i {
				t.Fatalf("options %+v: Get(%q) = %d, %v; want %d, true", o, k, v, ok, i)
			}
		}
		if in0 == 0 || in1 == 0 || falsePos == 0 {
			t.Fatalf("options %+v: keys in the first candidate %d, in the second %d, of those behind a false tag match %d: want some of each",
				o, in0, in1, falsePos)
		}
	}
}

// TestGet2StashedKeysBehindNoTagMatch: get2 answers "absent" without
// get2Rest when neither candidate has a tag match and the first
// candidate's stash hint is 0. A stashed key's candidates were full, and
// usually of other tags, so it is found only through the hint: every
// stashed key must still be found, and keys never set must not be. The
// table is pinned (as a running All loop pins it) so that it does not
// grow and the keys set past its capacity go to the stash.
func TestGet2StashedKeysBehindNoTagMatch(t *testing.T) {
	skipWithoutGet2(t)
	for _, o := range get2Options {
		s := newTestMapOf[string, int](t, o)
		tb := s.pin()
		keys := keyset.Synthetic(2*int(tb.n)*tb.size, 4)
		for i, k := range keys {
			s.Set(k, i)
		}
		var noMatch int
		for _, e := range tb.stash.entries() {
			h := s.hash(e.key)
			tag := tagOf(h)
			c0, c1 := tb.cand2(h)
			if ctrl(tb.bucket(c0).ctrl.Load()).match(tag)|ctrl(tb.bucket(c1).ctrl.Load()).match(tag) == 0 {
				noMatch++
			}
		}
		for i, k := range keys {
			if v, ok := s.Get(k); !ok || v != i {
				t.Fatalf("options %+v: Get(%q) = %d, %v; want %d, true", o, k, v, ok, i)
			}
			if v, ok := s.Get("absent:" + k); ok {
				t.Fatalf("options %+v: Get of a key never set found %d", o, v)
			}
		}
		s.unpin()
		if noMatch == 0 {
			t.Fatalf("options %+v: no stashed key has candidates without a tag match: the test misses the path", o)
		}
	}
}

// TestOptimisticReadsAreWhole: readers never see a value half written.
// Each value is equal words, rewritten with a new number by writers while
// readers Get the same few keys and check that all the words agree, in an
// unbounded store (Get, during growth too) and in a cache (its own
// lookup). A read that skipped the version check, ignored a writer holding
// the bucket, or a write that did not move the version, returns mixed
// words sooner or later: on one core the Gets rarely land inside a write,
// so the detection is statistical, but a correct store never fails it.
//
// Two slot types: a key and 24 words (most a slot read optimistically may
// have; large values and two keys make the reads long and the writes to
// one bucket frequent), and a string key and 2 words, whose pointer word
// and short copy get2's inline read (its common case) must get right too.
// More readers than cores get preempted in the middle of reads, which a
// write must not slip into unseen.
func TestOptimisticReadsAreWhole(t *testing.T) {
	updates := 100_000
	if testing.Short() {
		updates = 30_000
	}
	t.Run("words=25", func(t *testing.T) {
		type val = [24]uint64
		testWholeReads(t, updates, func(i int) int { return i }, func(x uint64) (v val) {
			for i := range v {
				v[i] = x
			}
			return v
		}, func(v val) uint64 { return v[0] })
	})
	t.Run("words=4", func(t *testing.T) {
		type val = [2]uint64
		// Short copies tear rarely: three times the writes.
		updates := 3 * updates
		names := make([]string, 2+updates)
		for i := range names {
			names[i] = fmt.Sprint("key", i)
		}
		testWholeReads(t, updates, func(i int) string { return names[i] }, func(x uint64) val {
			return val{x, x}
		}, func(v val) uint64 { return v[0] })
	})
}

// testWholeReads is TestOptimisticReadsAreWhole for keys key(i) and
// values fill(x), whose words are all x; first(v) is v's first word.
func testWholeReads[K, V comparable](t *testing.T, updates int, key func(int) K, fill func(uint64) V, first func(V) uint64) {
	if !optimisticReads || slotLayout[K, V]().words == 0 {
		t.Skip("slots of this type are read under the lock in this build")
	}
	for _, o := range []Options{{Seed: 1}, {Seed: 2, MaxEntries: 64}} {
		mode := "unbounded"
		if o.MaxEntries > 0 {
			mode = "cache"
		}
		t.Run(mode, func(t *testing.T) {
			s := newTestStore[K, V](t, o)
			const keys = 2
			for k := range keys {
				s.Set(key(k), fill(0))
			}
			var (
				done atomic.Bool
				torn atomic.Int64
				wg   sync.WaitGroup
			)
			for r := range 4 {
				wg.Go(func() {
					for i := r; !done.Load(); i++ {
						if v, ok := s.Get(key(i % keys)); ok && v != fill(first(v)) {
							if torn.Add(1) == 1 {
								t.Errorf("Get(%v) = %v: words of two writes", key(i%keys), v)
							}
						}
					}
				})
			}
			for i := range updates {
				s.Set(key(i%keys), fill(uint64(i)))
				if o.MaxEntries == 0 && i%1024 == 0 {
					s.Set(key(keys+i), fill(0)) // and grow now and then
				}
			}
			done.Store(true)
			wg.Wait()
		})
	}
}

// TestCand2MatchesGenerator: the two-choice fast path draws the same
// candidates as the generator, for every scheme and table sizes of every
// kind (odd, prime, power of two).
func TestCand2MatchesGenerator(t *testing.T) {
	r := rand.New(rand.NewPCG(seedFor(t), 9))
	for _, rule := range []bucket.Placement{bucket.DChoice, bucket.Halves, bucket.GoLeft, bucket.DoubleHash} {
		for _, n := range []uint64{2, 3, 4, 7, 8, 1000, 1024, 1031, 99991, 1 << 20, hashfn.MaxBuckets} {
			o := Options{Placement: rule, Choices: 2, BucketSize: 8}
			if rule.Scheme() == hashfn.Double && n&(n-1) != 0 && !hashfn.IsPrime(n) {
				continue
			}
			if rule.Scheme() == hashfn.Parts && n%2 != 0 {
				continue
			}
			gen, err := rule.Generator(n, 2)
			if err != nil {
				t.Fatal(err)
			}
			// Set up a table without its buckets: 2^32 of them would not
			// fit in memory, and cand2 does not read them.
			full := &table[int, int]{geometry: newGeometry(&o, n)}
			var c [hashfn.MaxChoices]uint64
			for range 2000 {
				h := r.Uint64()
				gen.Fill(h, c[:])
				if a, b := full.cand2(h); a != c[0] || b != c[1] {
					t.Fatalf("%s n=%d h=%#x: cand2 %d %d, Fill %d %d", rule, n, h, a, b, c[0], c[1])
				}
			}
		}
	}
}
