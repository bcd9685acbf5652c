package store

import (
	"math"
	"time"
)

// Expiry. A cache slot's expiry is an absolute time in Unix nanoseconds by
// the cache's clock (0: none), kept beside the slot (bucketMeta), so that
// a snapshot saves it as it is and another process restores it: Open
// leaves out the entries whose expiry has passed by its clock.

// nowOf returns the time by the clock of options o (the system clock when
// none is set), in Unix nanoseconds.
func nowOf(o *config) int64 {
	if o.Clock != nil {
		return o.Clock.Now().UnixNano()
	}
	return time.Now().UnixNano()
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
