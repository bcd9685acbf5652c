package store

import "sync/atomic"

// counters are the store's hit and miss counts. Every Get adds one, so a
// single counter would be a cache line that every core writes on every
// lookup, the contention a read must not cause. They are striped instead: each
// stripe has cache lines of its own, and a Get adds to the stripe of its
// goroutine (stripeHint, from the address of its stack), so two goroutines
// on two cores usually write two lines that each stay in its core's cache,
// and the add costs one uncontended locked instruction. Stats adds the
// stripes up.
//
// counters sits inside a Map or Cache at whatever offset the fields before it
// leave, so its stripes are not aligned to cache lines (48 bytes past a
// line, say): with a stripe of one line, each stripe's hit counter would
// share a line with the previous stripe's Set counters. So a
// stripe takes two lines, and a line of padding leads the array: the
// counters of two stripes are then more than a line apart at any
// alignment, and so are the first stripe's and the fields before
// counters, and the last stripe's and the fields after it (the owner's
// read-mostly fields and its writers' mutex). Two lines also keep
// neighbouring stripes out of the pair of lines that Intel's adjacent-line
// prefetcher fetches together.
type counters struct {
	_       [cacheLine]byte
	stripes [numStripes]stripe
}

// numStripes is a power of two; 64 stripes make two given goroutines
// share one with probability 1/64, and cost 8 KiB per store.
const (
	stripeBits = 6
	numStripes = 1 << stripeBits
)

type stripe struct {
	hits, misses atomic.Uint64
	// Cache mode: its writers take no store-wide lock, so they count here
	// too (cache.go), with at most one atomic add per Set in the common
	// cases. A Set of a new key is counted by the eviction clock's tick
	// alone (clock.go), which it needs anyway; the counts below are of the
	// other cases, and Stats derives the rest:
	//
	//	Sets        = updates + inserts (ticks)
	//	Evictions   = inserts − fills − expiredVictims + evictions
	//	Expirations = expirations + expiredVictims
	//
	// updates: Sets of a key already there; fills: ticked Sets that
	// evicted nothing (a new key that took an empty slot, or a key that
	// came in while the Set took its locks); expiredVictims: new keys that took an expired entry's
	// slot; expirations: expired entries removed by Get and Delete.
	//
	// evictions: entries evicted other than by a Set of a new key into
	// their slot (a table that SetMaximum shrinks, a weight bound).
	// relocations: entries moved to their other candidate to make room
	// (relocate.go).
	//
	// A map counts its Sets here too (updates and fills, new keys), and
	// its Deletes; inflight is its writers' gate (gate.go).
	updates, fills, expiredVictims, expirations, deletes, evictions atomic.Uint64
	relocations                                                     atomic.Uint64
	inflight                                                        atomic.Int64
	_                                                               [2*cacheLine - 80]byte
}

// cacheLine is the size of a cache line on the common 64-bit CPUs.
const cacheLine = 64

// stripeOf spreads a hint over the stripes.
func stripeOf(hint uint64) uint64 { return hint * 0x9e3779b97f4a7c15 >> (64 - stripeBits) }

func (c *counters) hit(hint uint64)  { c.stripes[stripeOf(hint)].hits.Add(1) }
func (c *counters) miss(hint uint64) { c.stripes[stripeOf(hint)].misses.Add(1) }

func (c *counters) stripe(hint uint64) *stripe { return &c.stripes[stripeOf(hint)] }

func (c *counters) sum() (hits, misses uint64) {
	for i := range c.stripes {
		hits += c.stripes[i].hits.Load()
		misses += c.stripes[i].misses.Load()
	}
	return hits, misses
}

// sumMap returns a map's Sets (updates and inserts) and Deletes.
func (c *counters) sumMap() (sets, deletes uint64) {
	for i := range c.stripes {
		st := &c.stripes[i]
		sets += st.updates.Load() + st.fills.Load()
		deletes += st.deletes.Load()
	}
	return sets, deletes
}

// sumCache returns the cache mode's counts, given the inserts (the
// eviction clock's ticks, read before the stripes): see stripe. Each is at
// most its true count: the ticks are (ticks.total), and a Set counts its
// fill or expired victim before its tick (setCache), so the fills read
// after the ticks cover every ticked fill, and evictions, inserts less
// those, are never ahead either. Read while writers work, the counts lag
// by the Sets in flight; Stats makes them monotonic (monotone).
func (c *counters) sumCache(inserts uint64) (evictions, expirations, sets, deletes uint64) {
	var updates, fills, expiredVictims, others uint64
	for i := range c.stripes {
		st := &c.stripes[i]
		updates += st.updates.Load()
		fills += st.fills.Load()
		expiredVictims += st.expiredVictims.Load()
		expirations += st.expirations.Load()
		deletes += st.deletes.Load()
		others += st.evictions.Load()
	}
	if taken := fills + expiredVictims; inserts > taken {
		evictions = inserts - taken
	}
	evictions += others
	return evictions, expirations + expiredVictims, updates + inserts, deletes
}

// monotone holds the highest figure Stats has returned for each counter
// that it derives or adds up while writers work, so that no figure it
// returns is below one it returned before. The figures it derives are
// lower bounds of the true counts (sumCache), so the highest of them is
// too, and at idle, when the figures are exact, it is the exact count.
type monotone struct {
	v [numMono]atomic.Uint64
}

// The counters monotone keeps.
const (
	monoHits = iota
	monoMisses
	monoSets
	monoDeletes
	monoEvictions
	monoExpirations
	numMono
)

// at returns the larger of x and the highest figure returned for counter
// i, and records it.
func (m *monotone) at(i int, x uint64) uint64 {
	for {
		old := m.v[i].Load()
		if x <= old {
			return old
		}
		if m.v[i].CompareAndSwap(old, x) {
			return x
		}
	}
}

// relocations returns the entries moved to make room (relocate.go).
func (c *counters) relocations() uint64 {
	var n uint64
	for i := range c.stripes {
		n += c.stripes[i].relocations.Load()
	}
	return n
}
