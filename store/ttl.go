package store

import (
	"math"
	"time"
)

// What snapshots (issue 6) need of the cache mode's expiries. A slot's
// expiry is an absolute time in Unix nanoseconds by the store's clock (0:
// none), so it can be saved as it is and restored in another process:
//
//   - table.entriesOf(i, &dst, &exps) reads bucket i's entries with their
//     expiries, a consistent view of the bucket (cache.go);
//   - Store.setExpiring stores an entry with an absolute expiry.

// setExpiring stores v for k to expire at exp (Unix nanoseconds by the
// store's clock; 0: never), as SetWithTTL would have. An unbounded store
// has no expiries and stores the entry as Set does, unless exp is set and
// already past, in which case it stores nothing: a snapshot's expired
// entry stays expired. It reports whether it stored the entry.
func (s *Store[K, V]) setExpiring(k K, v V, exp int64) bool {
	if exp != 0 && exp <= s.nowNanosAny() {
		return false
	}
	if !s.cache {
		s.Set(k, v)
		return true
	}
	h := s.hash(k)
	s.setCache(k, v, h, tagOf(h), exp, false)
	return true
}

// nowNanosAny is nowNanos for any store: an unbounded one has no Clock
// option set up, and uses Options.Clock or the system clock.
func (s *Store[K, V]) nowNanosAny() int64 {
	if s.clock != nil {
		return s.nowNanos()
	}
	if s.opts.Clock != nil {
		return s.opts.Clock.Now().UnixNano()
	}
	return systemClock{}.Now().UnixNano()
}

// expiryAt returns the expiry of an entry set at now (Unix nanoseconds)
// to live for ttl > 0. A ttl that would carry the time past the largest
// int64 (a TTL of centuries, or math.MaxInt64 meaning "no real limit")
// gives the largest time instead of wrapping to a time long past, which
// would drop the entry at once. An expiry of exactly 0 would read as
// "never" and is moved to 1 ns later (it takes a clock before 1970).
func expiryAt(now int64, ttl time.Duration) int64 {
	exp := now + int64(ttl)
	if ttl > 0 && exp < now {
		return math.MaxInt64
	}
	if exp == 0 {
		return 1
	}
	return exp
}
