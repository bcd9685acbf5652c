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

// newEntries returns a cache of at most max entries, its whole table
// allocated now, that tells the time for expiries by clock.
func newEntries[K comparable, V any](max int, clock *clock) (*entries[K, V], error) {
	s, err := store.NewCache[K, V](store.CacheOptions[K, V]{MaxEntries: max, Clock: clock})
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

// assumedPayloadBytes is what entriesForBytes counts for the memory an
// entry reaches beyond its slot and its fixed allocations: the key's
// bytes and the reply's (a key of a few dozen bytes and a reply of about
// a hundred).
const assumedPayloadBytes = 128

// entriesForBytes converts a bound in bytes into the bound in entries
// that the cache enforces, counting each entry as its slot, fixed bytes
// of its own (what the value points to, whatever the reply) and
// assumedPayloadBytes. The cache does not weigh its entries, so the
// conversion is only as good as that assumption: replies much larger than
// it make the near-cache hold more bytes than maxBytes, and much smaller
// ones fewer. At least minEntries.
func entriesForBytes[K comparable, V any](maxBytes, fixed int64) int {
	n := maxBytes / (slotBytes[K, V]() + fixed + assumedPayloadBytes)
	return int(min(max(n, minEntries), maxEntries))
}
