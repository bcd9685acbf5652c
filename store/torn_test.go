package store

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

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
