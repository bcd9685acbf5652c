package near

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/twochoice/twochoice/store"
)

// This file is the near-cache's only use of package store: the few calls
// it makes on the bounded cache that holds its entries, so that a change
// of the store's API is a change here alone.

// entries is the bounded cache of the near-cache's entries.
type entries[K comparable, V any] struct {
	s *store.Cache[K, V]
}

// newEntries returns a cache of at most max entries and, if maxWeight is
// not 0, of entries weighing at most maxWeight by weigh, that tells the
// time for expiries by clock.
func newEntries[K comparable, V any](max int, maxWeight uint64, weigh func(K, V) uint32, clock *clock) (*entries[K, V], error) {
	o := store.CacheOptions[K, V]{MaxEntries: max, Clock: clock}
	if maxWeight > 0 {
		o.MaxWeight, o.Weigher = maxWeight, weigh
	}
	s, err := store.NewCache[K, V](o)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	return &entries[K, V]{s: s}, nil
}

// get returns k's entry, if it has one that has not expired.
func (e *entries[K, V]) get(k K) (V, bool) { return e.s.Get(k) }

// set stores v for k, to expire after ttl (> 0).
func (e *entries[K, V]) set(k K, v V, ttl time.Duration) { e.s.SetWithTTL(k, v, ttl) }

// delete removes k's entry, if any.
func (e *entries[K, V]) delete(k K) { e.s.Delete(k) }

// len returns the number of entries held, expired ones included until the
// cache removes them.
func (e *entries[K, V]) len() int { return e.s.Len() }

// weight returns the total weight of the entries held (0 without a bound
// in bytes).
func (e *entries[K, V]) weight() uint64 { return e.s.Weight() }

// counts returns the cache's own counters: the gets that found an entry,
// and the entries evicted to make room.
func (e *entries[K, V]) counts() (hits, evictions uint64) {
	st := e.s.Stats()
	return st.Hits, st.Evictions
}

// maxEntries is the largest bound the cache accepts.
const maxEntries = store.MaxCacheEntries

// slotBytes is the memory the cache's table gives one entry whether it is
// used or not: the key and value side by side, and about 30 bytes of
// bookkeeping (store.CacheOptions.MaxEntries lists them).
func slotBytes[K comparable, V any]() int64 {
	var k K
	var v V
	return int64(unsafe.Sizeof(k)+unsafe.Sizeof(v)) + 30
}

// assumedPayloadBytes is what an entry's reply is counted for when the
// client's message type cannot say its size (Ops.Size is nil), and the
// smallest entry entriesForBytes counts on: a key of a few dozen bytes and
// a reply of about a hundred.
const assumedPayloadBytes = 128

// minPayloadBytes is the key and reply bytes of the smallest entry the
// bound in entries allows for: the bound in bytes weighs every entry, so
// the bound in entries that goes with it only sizes the table, which grows
// as entries arrive; it is set where entries of a short key and a short
// reply would fill the bytes.
const minPayloadBytes = 32

// entriesForBytes returns the bound in entries that goes with a bound in
// bytes: as many entries of their slot, fixed bytes of their own (what
// the value points to) and minPayloadBytes as maxBytes holds, at least
// minEntries.
func entriesForBytes[K comparable, V any](maxBytes, fixed int64) int {
	n := maxBytes / (slotBytes[K, V]() + fixed + minPayloadBytes)
	return int(min(max(n, minEntries), maxEntries))
}
