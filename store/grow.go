package store

import (
	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
)

// Growth.
//
// A table grows when its entries pass maxUtilization × n × BucketSize or
// its stash passes stashBound. The new table has about growthNum/growthDen
// times as many buckets (rounded up to a size the rule accepts, see
// sizeAtLeast), and the keys move to it incrementally: every write moves
// the old bucket that may hold its key, if any, plus s.step more in order
// (at least minStep), so no caller ever waits for a whole rehash, and the
// move is done well before the new table can fill up. While keys move, a lookup
// checks the old table first and then the new one: keys only ever move
// forward (copied to the new table, then cleared from the old one), so a
// key present throughout is always found, and a miss is believed only if
// the pair of tables did not change while it looked.

// Growth factor: 3/2. Doubling would leave a freshly grown table at half
// the threshold; 3/2 leaves it at two thirds, which is what keeps the heap
// per entry below the Go map's (a Swiss table doubles, and sits between
// 7/16 and 7/8 full), at the price of moving each key about twice over the
// life of a growing store instead of once.
var growthNum, growthDen uint64 = 3, 2 // variables so BenchmarkGrowthFactor can compare

// minStep is the fewest old buckets a write moves during a growth: up to
// 32 keys, a few microseconds of work.
const minStep = 4

// initialBuckets is the size of an empty store's table per choice.
const initialBuckets = 4

// overflowTarget is the fraction of keys that may overflow into the stash,
// by the fluid limit, when a table reaches its utilization threshold.
const overflowTarget = 1e-4

// maxUtilization returns the utilization u = m / (n·C) at which a table
// grows: the largest u, in steps of 0.05, at which the fluid limit says at
// most overflowTarget of the keys find all their candidates full. For
// C = 8 the figures in REFERENCE.md's sizing table give
//
//	rule, d          u = 0.70   0.75     0.80     0.85     0.90    threshold
//	one choice       0.040      0.052    0.067    0.083    0.101   (lower)
//	d-choice, 2      2.2e-7     1.1e-5   1.9e-4   1.5e-3   6.8e-3  0.75
//	go-left, 2       3.0e-10    3.5e-7   3.5e-5   7.1e-4   4.9e-3  0.80
//	go-left, 4       ~0         4e-139   1.6e-49  2.8e-18  1.8e-7  0.90
//
// and the table below holds the same rule applied to every rule, d and C,
// computed with the fluid solver (TestThresholdsFollowFluidLimit checks
// it). Halves and double hashing share d-choice's fluid limit.
func maxUtilization(rule bucket.Placement, d, c int) float64 {
	if rule == bucket.GoLeft {
		return goLeftUtil[d-1][c-1]
	}
	return dChoiceUtil[d-1][c-1]
}

// Rows are d = 1…8, columns C = 1…8.
var (
	dChoiceUtil = [hashfn.MaxChoices][slotsPerBucket]float64{
		{0.05, 0.05, 0.05, 0.05, 0.10, 0.15, 0.20, 0.25},
		{0.30, 0.45, 0.55, 0.60, 0.65, 0.70, 0.70, 0.75},
		{0.50, 0.65, 0.70, 0.75, 0.75, 0.80, 0.80, 0.80},
		{0.60, 0.70, 0.75, 0.80, 0.80, 0.80, 0.85, 0.85},
		{0.65, 0.75, 0.80, 0.80, 0.85, 0.85, 0.85, 0.85},
		{0.70, 0.75, 0.80, 0.85, 0.85, 0.85, 0.85, 0.85},
		{0.70, 0.80, 0.80, 0.85, 0.85, 0.85, 0.90, 0.90},
		{0.75, 0.80, 0.85, 0.85, 0.85, 0.90, 0.90, 0.90},
	}
	goLeftUtil = [hashfn.MaxChoices][slotsPerBucket]float64{
		{0.05, 0.05, 0.05, 0.05, 0.10, 0.15, 0.20, 0.25},
		{0.35, 0.50, 0.60, 0.65, 0.70, 0.75, 0.75, 0.80},
		{0.60, 0.70, 0.75, 0.80, 0.80, 0.85, 0.85, 0.85},
		{0.70, 0.80, 0.80, 0.85, 0.85, 0.85, 0.90, 0.90},
		{0.75, 0.80, 0.85, 0.85, 0.90, 0.90, 0.90, 0.90},
		{0.80, 0.85, 0.85, 0.90, 0.90, 0.90, 0.90, 0.90},
		{0.80, 0.85, 0.90, 0.90, 0.90, 0.90, 0.90, 0.95},
		{0.85, 0.85, 0.90, 0.90, 0.90, 0.90, 0.95, 0.95},
	}
)

// thresholds returns the entry count and stash size past which a table of
// n buckets grows. The stash bound, 16 + slots/4096, is a few times what
// overflowTarget predicts at the threshold: the stash only fills past it
// when keys spread worse than the theory says (a poor hash family on
// structured keys, say), and then the table grows early instead of
// letting lookups slow down.
func thresholds(o *Options, n uint64) (maxEntries int64, stashBound int) {
	slots := n * uint64(o.BucketSize)
	u := maxUtilization(o.Placement, o.Choices, o.BucketSize)
	return int64(u * float64(slots)), 16 + int(slots>>12)
}

// sizeAtLeast returns the smallest table size ≥ n that the rule accepts:
// a multiple of d for rules with parts (so the parts are equal), a prime or
// a power of two for double hashing (so the d candidates never repeat),
// anything for the others; never more than hashfn.MaxBuckets.
func sizeAtLeast(o *Options, n uint64) uint64 {
	d := uint64(o.Choices)
	n = max(n, d)
	switch o.Placement.Scheme() {
	case hashfn.Parts:
		n = (n + d - 1) / d * d
	case hashfn.Double:
		if n&(n-1) != 0 {
			n = hashfn.PrimeAtLeast(n)
		}
	}
	return min(n, hashfn.MaxBuckets)
}

// nextSize returns the size a table of n buckets grows to, or n when it
// cannot grow (at hashfn.MaxBuckets: then the stash takes the overflow).
func nextSize(o *Options, n uint64) uint64 {
	if n >= hashfn.MaxBuckets {
		return n
	}
	next := sizeAtLeast(o, (n*growthNum+growthDen-1)/growthDen)
	if next > hashfn.MaxBuckets || next <= n {
		return n
	}
	return next
}

// needsGrowth reports whether t has passed a threshold.
func (t *table[K, V]) needsGrowth() bool {
	return t.entries > t.maxEntries || t.stash.len() > t.stashBound
}

// grow starts moving the keys of the current table t into a bigger one.
// The caller holds s.mu and no growth is under way.
func (s *Store[K, V]) grow(t *table[K, V]) {
	n := uint64(len(t.buckets))
	next := nextSize(&s.opts, n)
	if next == n {
		return
	}
	nt := newTable[K, V](&s.opts, next, &s.tot)
	s.tabs.Store(&tables[K, V]{cur: nt, old: t})
	s.next = 0
	var c [hashfn.MaxChoices]uint64
	// Move the old stash first, all at once: it is small (bounded), and
	// then the rest of the move only has buckets to visit. Each key is
	// copied before it is removed, so a lookup always finds it.
	for _, e := range t.stash.entries() {
		h := s.hash(e.key)
		nt.insert(e.key, e.val, h, tagOf(h))
		t.stash.remove(e.key)
		t.buckets[t.candidates(h, &c)[0]].sync.addHint(-1)
		t.entries--
	}
	// Enough buckets per write that the move ends before the new table
	// can reach its own threshold, even if every write adds a key; and at
	// least minStep, so that the move is over soon (while it lasts, a write
	// also checks the old table, and both tables take memory).
	room := max(nt.maxEntries-t.entries-nt.entries, 1)
	s.step = max(int((int64(n)+room-1)/room)+1, minStep)
	s.grows++
}

// migrateFor, during a growth, makes sure the key with hash h is not left
// in the old table (it moves any old candidate bucket whose tags match the
// key's), then moves s.step more old buckets in order, and ends the growth
// when none are left. The caller holds s.mu. It returns the tables as they
// are afterwards.
//
// Moving only the candidates whose tags match, rather than all of them,
// keeps most of the move in bucket order, where the old table is read
// sequentially and the CPU's prefetcher hides its misses.
func (s *Store[K, V]) migrateFor(st *tables[K, V], h uint64) *tables[K, V] {
	var c [hashfn.MaxChoices]uint64
	tag := tagOf(h)
	for _, i := range st.old.candidates(h, &c) {
		if ctrl(st.old.buckets[i].ctrl.Load()).match(tag) != 0 {
			s.migrateBucket(st, i)
		}
	}
	return s.advance(st, s.step)
}

// advance moves up to k more old buckets in order and ends the growth if
// that was the last of them. The caller holds s.mu.
func (s *Store[K, V]) advance(st *tables[K, V], k int) *tables[K, V] {
	old := st.old
	for ; k > 0 && s.next < len(old.buckets); k-- {
		s.migrateBucket(st, uint64(s.next))
		s.next++
	}
	if s.next < len(old.buckets) {
		return st
	}
	done := &tables[K, V]{cur: st.cur}
	s.tabs.Store(done)
	return done
}

// migrateBucket moves the keys of old bucket i into the new table: copied
// first, then cleared, so a reader finds each key in one table or the
// other (or, for a moment, both, with the same value). It also drains the
// bucket's counters into the totals. It hashes all the bucket's keys
// before inserting any, so the CPU can fetch their (string) bytes in
// parallel rather than one cache miss after another.
func (s *Store[K, V]) migrateBucket(st *tables[K, V], i uint64) {
	b := &st.old.buckets[i]
	c := ctrl(b.ctrl.Load())
	if c.full() != 0 {
		var (
			es [slotsPerBucket]slot[K, V]
			hs [slotsPerBucket]uint64
		)
		n := 0
		for m := c.full(); m != 0; m &= m - 1 {
			es[n] = b.slots[slotOf(m)]
			hs[n] = s.hash(es[n].key)
			n++
		}
		st.cur.insertBatch(es[:n], hs[:n])
		b.sync.lock()
		b.ctrl.Store(0)
		clear(b.slots[:])
		b.sync.unlock()
		st.old.entries -= int64(c.load())
	}
	s.tot.drainAll(&b.sync, i)
}
