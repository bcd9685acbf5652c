package store

import (
	"github.com/twochoice/twochoice/bucket/fluid"
	"github.com/twochoice/twochoice/hashfn"
)

// Hash flooding: keys whose candidates collide far more than a random
// function's would.
//
// A table's stash holds the keys whose candidates were all full, and the
// fluid limit says how many that should be: at the growth threshold at
// most overflowTarget of the keys (1e-4), and fewer below it. stashBound,
// 16 + slots/4096, is a few times that. A stash past it while the entries
// still fit under the threshold means the keys do not spread as the
// theory assumes: they collide, through a poor match of family and keys or
// by design. An attacker can build such keys for xxHash64 without knowing
// the seed (its lane differences cancel whatever the seed: see
// keyset.XXHashFlood), and with the seed for xxHash64 on integers (its
// 8-byte hash is invertible) or tabulation (which is linear in its tables).
//
// Growing does not separate keys whose hashes are equal, so the table does
// not grow for its stash (needsGrowth): a stashed key costs O(1) per
// operation whatever the keys, the stash being a Go map, which hashes
// with a per-process random seed of its own. Instead the store re-keys the
// table: it prepares a table of the same size (or the next size on the
// growth path, when the entries are within a quarter of the threshold)
// under a new hash function, a chunk per insert as for a growth, and moves
// the keys to it as a growth does, a few buckets per write (startMove).
// The new function is, at the first flood, the same family under a new
// random seed, which separates keys crafted against the old seed; at the
// next, SipHash (hashfn.Sip) under a random seed, which separates keys
// that collide under every seed of the family; under SipHash, only keys
// crafted against its seed can flood, and a new seed separates them. A
// re-key starts at most once per max(entries, minRekeyGap) inserts, but
// for the move to SipHash that follows a re-seed at once, so the moves
// cost O(1) amortized per insert even against keys that flood every
// function. Stats.Rekeys and the load report count re-keys, and
// Options and the load report give the family and seed in use. A cache
// needs none of this: its table never grows, and keys that collide only
// evict one another from their shared candidates.
type floodState[K comparable] struct {
	// pending is the hash function of the table being prepared for a
	// re-key, nil when none is.
	pending *hasher[K]
	// reseeded: the current family was re-seeded after a flood, so the
	// next flood moves to SipHash.
	reseeded bool
	rekeys   uint64 // re-keys started
	// overflow is the fluid limit's share of keys that overflow at the
	// growth threshold, once solved (flooded).
	overflow float64
	solved   bool
	allowAt  int64 // inserts (Map.inserted) at which the next re-key may start
}

// minRekeyGap is the fewest inserts between two re-keys.
const minRekeyGap = 1024

// flooded reports whether the current table t holds keys that collide:
// its stash is past its bound while its entries are under the growth
// threshold, and past four times what the fluid limit lets overflow at
// the threshold. The second test matters only for the few rules whose
// threshold is the lowest one (0.05: one choice with buckets of one or
// two slots, two choices with buckets of one), where more than
// overflowTarget of the keys overflow at the threshold; it is worked out
// once per store, the first time a stash passes its bound. The caller
// holds s.mu.
func (s *Map[K, V]) flooded(t *table[K, V]) bool {
	stash := t.stash.len()
	if stash <= t.stashBound || t.entries.Load() > t.maxEntries {
		return false
	}
	f := &s.flood
	if !f.solved {
		o := &s.cfg
		ov, err := fluid.OverflowAt(o.Placement, o.Choices, o.BucketSize, maxUtilization(o.Placement, o.Choices, o.BucketSize))
		if err != nil {
			ov = 1 // the solver takes every rule and size the store does
		}
		f.overflow, f.solved = ov, true
	}
	return float64(stash) > 4*f.overflow*float64(t.maxEntries)
}

// allowed reports whether a re-key may start: none is being prepared, and
// enough keys came in since the last one or the last one was a re-seed
// within a family other than SipHash (the move to SipHash then follows at
// once: a flood that survives a new seed does not depend on the seed).
func (f *floodState[K]) allowed(inserts int64) bool {
	return f.pending == nil && (inserts >= f.allowAt || f.reseeded)
}

// rekeyStarted records that a move from old to nt, which hashes
// differently, started. The caller holds s.mu.
func (s *Map[K, V]) rekeyStarted(old, nt *table[K, V]) {
	f := &s.flood
	f.rekeys++
	f.reseeded = nt.fn.Kind() == old.fn.Kind() && nt.fn.Kind() != hashfn.SipHash
	f.pending = nil
	f.allowAt = s.inserted() + max(old.entries.Load(), minRekeyGap)
}

// rekey answers a flood in the current table t: it picks the next hash
// function and starts preparing the table to move to. The caller holds
// s.mu and no move is under way.
func (s *Map[K, V]) rekey(t *table[K, V]) {
	kind := t.fn.Kind()
	if kind != hashfn.SipHash && s.flood.reseeded {
		kind = hashfn.SipHash
	}
	fn, err := hashfn.New(kind, randomSeed())
	if err != nil {
		panic("store: " + err.Error()) // kinds come from hashfn
	}
	hs := hasherOf[K](fn)
	s.flood.pending = &hs
	s.prep = nil
	s.prepareRekey(t)
}

// prepareRekey allocates one more chunk of the table a pending re-key
// moves t into, and starts the move once that table is whole and no
// visitor pins t. The caller holds s.mu.
func (s *Map[K, V]) prepareRekey(t *table[K, V]) {
	if s.prep == nil || s.prep.fn != s.flood.pending.fn {
		next := t.n
		limit := t.maxEntries / 4 * 3
		if t.entries.Load() > limit {
			next = growTo(&s.cfg, t.n, t.entries.Load())
			limit = growLimit(&s.cfg, t.n, next)
		}
		s.prep = newTableFn[K, V](&s.cfg, next, s.lay, false, *s.flood.pending)
		s.prepTo = limit
	}
	s.prep.allocNext()
	if s.prep.ready == len(s.prep.hdrs) && s.pins == 0 {
		s.startMove(t, s.prep)
	}
}

// nextHasher returns the hash function of the table that t's next move
// goes to: a pending re-key's, or t's own.
func (s *Map[K, V]) nextHasher(t *table[K, V]) hasher[K] {
	if s.flood.pending != nil {
		return *s.flood.pending
	}
	return t.hasher
}
