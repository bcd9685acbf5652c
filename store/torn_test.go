package store

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestOptimisticReadsAreWhole: readers never see a value half written.
// Each value is 24 equal words, rewritten with a new number by writers
// while readers Get the same few keys and check that all the words agree,
// in an unbounded store (Get, during growth too) and in a cache (its own
// lookup). Large values and two keys make the reads long and the writes
// to one bucket frequent; more readers than cores get preempted in the
// middle of reads, which a write must not slip into unseen. A read that skipped the version check, ignored a writer holding
// the bucket, or a write that did not move the version, returns mixed words
// sooner or later: on one core the Gets rarely land inside a write, so the
// detection is statistical, but a correct store never fails it.
func TestOptimisticReadsAreWhole(t *testing.T) {
	type val = [24]uint64 // the key and 24 words: most a slot read optimistically may have
	if !optimisticReads || slotLayout[int, val]().words == 0 {
		t.Skip("slots of this type are read under the lock in this build")
	}
	updates := 100_000
	if testing.Short() {
		updates = 30_000
	}
	fill := func(x uint64) (v val) {
		for i := range v {
			v[i] = x
		}
		return v
	}
	for _, o := range []Options{{Seed: 1}, {Seed: 2, MaxEntries: 64}} {
		mode := "unbounded"
		if o.MaxEntries > 0 {
			mode = "cache"
		}
		t.Run(mode, func(t *testing.T) {
			s := newTestStore[int, val](t, o)
			const keys = 2
			for k := range keys {
				s.Set(k, val{})
			}
			var (
				done atomic.Bool
				torn atomic.Int64
				wg   sync.WaitGroup
			)
			for r := range 4 {
				wg.Go(func() {
					for i := r; !done.Load(); i++ {
						if v, ok := s.Get(i % keys); ok && v != fill(v[0]) {
							if torn.Add(1) == 1 {
								t.Errorf("Get(%d) = %v: words of two writes", i%keys, v)
							}
						}
					}
				})
			}
			for i := range updates {
				x := uint64(i)
				s.Set(i%keys, fill(x))
				if o.MaxEntries == 0 && i%1024 == 0 {
					s.Set(keys+i, val{}) // and grow now and then
				}
			}
			done.Store(true)
			wg.Wait()
		})
	}
}
