package store

import "sync/atomic"

// counters are the store's running totals of hits and misses, where the
// per-bucket counters in the sync words drain (see lock.go). They are
// striped by bucket, and each stripe has a cache line of its own, so two
// cores draining different buckets do not fight over one line. Draining is
// rare (once per drainAt events on one bucket), so this is not on any hot
// path; sets, deletes and grows are counted by writers, who hold the
// store's mutex anyway.
type counters struct {
	stripes [16]stripe
}

type stripe struct {
	hits, misses atomic.Uint64
	_            [cacheLine - 16]byte
}

// cacheLine is the size of a cache line on the common 64-bit CPUs.
const cacheLine = 64

func (c *counters) stripe(i uint64) *stripe { return &c.stripes[i%uint64(len(c.stripes))] }

func (c *counters) drainHits(w *syncWord, i uint64) {
	if n := w.take(hitShift, drainAt); n > 0 {
		c.stripe(i).hits.Add(n)
	}
}

func (c *counters) drainMisses(w *syncWord, i uint64) {
	if n := w.take(missShift, drainAt); n > 0 {
		c.stripe(i).misses.Add(n)
	}
}

// drainAll moves everything counted in w into the totals.
func (c *counters) drainAll(w *syncWord, i uint64) {
	s := c.stripe(i)
	if n := w.take(hitShift, counterMask); n > 0 {
		s.hits.Add(n)
	}
	if n := w.take(missShift, counterMask); n > 0 {
		s.misses.Add(n)
	}
}

func (c *counters) stashHit(i uint64) { c.stripe(i).hits.Add(1) }

func (c *counters) sum() (hits, misses uint64) {
	for i := range c.stripes {
		hits += c.stripes[i].hits.Load()
		misses += c.stripes[i].misses.Load()
	}
	return hits, misses
}
