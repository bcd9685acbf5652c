package store

import (
	"sync/atomic"
	"time"
)

// A Clock tells a Cache the time, for TTLs (CacheOptions.Clock). Tests
// inject one to move time by hand. Its Now must be safe for concurrent
// use; the store calls it only for entries that have an expiry, and on
// writes that set or may evict one.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// nowNanos returns the store's time in Unix nanoseconds, the unit of the
// slots' expiry field.
func (s *Cache[K, V]) nowNanos() int64 { return s.clock.Now().UnixNano() }

// ticks is the logical clock of a bounded store's eviction policy: it
// counts the keys inserted, the eviction policy's sense of "how long ago"
// (a slot remembers the tick of its last access, evict.go). A single
// counter would be a cache line that every inserting core writes, so
// each stripe counts its own goroutines' inserts (as the hit counters do,
// counters.go) and hands them to the shared count batch at a time. A
// goroutine reads the shared count plus its own stripe's pending ticks,
// so it sees the others' ticks up to batch−1 late. The stripe comes from
// the address of the caller's stack, so even one goroutine may tick on one
// stripe in a Set and read another in a Get: batch is at most the policy's
// recency slack (evict.go), a 256th of the capacity, up to tickBatch,
// which keeps the lag under what the policy notices. Each count is
// followed by more than a line of padding, so that no two share a cache
// line whatever the alignment (see counters).
type ticks struct {
	global atomic.Uint64
	batch  uint64
	_      [2*cacheLine - 16]byte
	local  [numStripes]tickStripe
}

// newTicks returns a clock whose stripes hand on batch ticks at a time
// (1 to tickBatch).
func newTicks(batch uint64) *ticks {
	return &ticks{batch: min(max(batch, 1), tickBatch)}
}

type tickStripe struct {
	n atomic.Uint64
	_ [2*cacheLine - 8]byte
}

// tickBatch is the most ticks a stripe gathers before adding them to the
// shared count.
const tickBatch = 64

// maxLag bounds how far one goroutine's reading of the clock can be
// behind another's, in ticks and so in tick units too: every other
// stripe's pending ticks, fewer than a batch each.
const maxLag = numStripes * tickBatch

// now returns the tick as the goroutine with the given hint sees it.
func (c *ticks) now(hint uint64) uint64 {
	return c.global.Load() + c.local[stripeOf(hint)].n.Load()
}

// tick counts one insert. It returns the shared count before and after
// when it moved, else 0, 0.
func (c *ticks) tick(hint uint64) (before, after uint64) {
	l := &c.local[stripeOf(hint)]
	// Exactly one add sees the stripe reach batch, even when two
	// goroutines share the stripe.
	if l.n.Add(1) != c.batch {
		return 0, 0
	}
	// The stripe first: a reader in between (total, now) misses the
	// batch rather than seeing it twice, so the insert count that Stats
	// derives from the ticks is a lower bound, never ahead of the inserts
	// (Stats keeps its figures monotonic on top: counters.go).
	l.n.Add(^(c.batch - 1))
	after = c.global.Add(c.batch)
	return after - c.batch, after
}

// total returns the ticks so far: the inserts into the store (Stats
// counts them this way, counters.go). It reads the shared count before the
// stripes, and tick moves a batch from its stripe to the shared count in
// the other order, so no batch is counted twice: total is at most the
// ticks at its return, and exact when no insert is in flight.
func (c *ticks) total() uint64 {
	n := c.global.Load()
	for i := range c.local {
		n += c.local[i].n.Load()
	}
	return n
}
