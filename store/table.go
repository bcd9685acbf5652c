package store

import (
	"sync/atomic"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
)

// table is one array of n buckets with its candidate generator and stash.
// A store has one table, and two while it grows (see grow.go).
type table[K comparable, V any] struct {
	buckets []bucketOf[K, V]
	gen     hashfn.Generator
	rule    bucket.Placement
	d       int
	size    int    // BucketSize: the slots of a bucket in use
	capMask uint64 // the high bits of the first size control bytes

	// maxEntries and stashBound are the growth thresholds (grow.go).
	maxEntries int64
	stashBound int

	stash   stash[K, V]
	entries atomic.Int64 // keys in the buckets and the stash; written by writers only
	tot     *counters    // the store's totals, where bucket counters drain
}

func newTable[K comparable, V any](o *Options, n uint64, tot *counters) *table[K, V] {
	gen, err := o.Placement.Generator(n, o.Choices)
	if err != nil {
		// Sizes come from sizeAtLeast, which only returns sizes the
		// rule accepts: reaching this is a bug in this package.
		panic("store: " + err.Error())
	}
	t := &table[K, V]{
		buckets: make([]bucketOf[K, V], n),
		gen:     gen,
		rule:    o.Placement,
		d:       o.Choices,
		size:    o.BucketSize,
		capMask: capMaskOf(o.BucketSize),
		tot:     tot,
	}
	t.maxEntries, t.stashBound = thresholds(o, n)
	return t
}

// candidates fills c with the key's candidates and returns them.
func (t *table[K, V]) candidates(h uint64, c *[hashfn.MaxChoices]uint64) []uint64 {
	t.gen.Fill(h, c[:])
	return c[:t.d]
}

// get looks a key up: each candidate in order, checking tags without a
// lock and taking a bucket's read lock only on a tag match, then the stash
// if the first candidate's hint says a stashed key may be there. It also
// returns the first candidate, where Store.Get counts a miss.
func (t *table[K, V]) get(k K, h uint64, tag uint8) (v V, ok bool, first uint64) {
	var c [hashfn.MaxChoices]uint64
	cs := t.candidates(h, &c)
	for _, i := range cs {
		b := &t.buckets[i]
		if ctrl(b.ctrl.Load()).match(tag) == 0 {
			continue
		}
		var w uint64
		if v, ok, w = b.get(k, tag); ok {
			if w>>hitShift&counterMask >= drainAt {
				t.tot.drainHits(&b.sync, i)
			}
			return v, true, c[0]
		}
	}
	if t.stash.len() > 0 && t.buckets[c[0]].sync.hint() != 0 {
		if v, ok = t.stash.get(k); ok {
			t.tot.stashHit(c[0])
			return v, true, c[0]
		}
	}
	return v, false, c[0]
}

// countMiss counts a lookup that found nothing on its first candidate.
func (t *table[K, V]) countMiss(first uint64) {
	w := &t.buckets[first].sync
	if w.countMiss()>>missShift&counterMask >= drainAt {
		t.tot.drainMisses(w, first)
	}
}

// Writers' operations. The store's mutex serializes them, so they read
// slots and the stash without locks; they take a bucket's exclusive lock
// only to change it.

// set updates k if the table holds it and reports whether it did.
func (t *table[K, V]) set(k K, v V, h uint64, tag uint8) bool {
	var c [hashfn.MaxChoices]uint64
	for _, i := range t.candidates(h, &c) {
		b := &t.buckets[i]
		if j := b.find(k, tag); j >= 0 {
			b.update(j, v)
			return true
		}
	}
	if t.stash.len() > 0 && t.stash.has(k) {
		t.stash.put(k, v)
		return true
	}
	return false
}

// insert places a key the table does not hold: in the candidate the rule
// picks, or in the stash when every candidate is full.
func (t *table[K, V]) insert(k K, v V, h uint64, tag uint8) {
	var c [hashfn.MaxChoices]uint64
	cs := t.candidates(h, &c)
	w := 0
	switch t.d {
	case 1:
	case 2:
		// Choose2 reads the coin's top bit: bit 7 of the hash, beside
		// the tag's bits 0–6, so placement follows from the seed.
		w = t.rule.Choose2(t.load(cs[0]), t.load(cs[1]), h<<56)
	default:
		var loads [hashfn.MaxChoices]uint32
		for j, i := range cs {
			loads[j] = t.load(i)
		}
		// Choose reads 32 coin bits: they come from an extension word
		// of the hash that no candidate uses (candidates use 1 to 3).
		w = t.rule.Choose(loads[:t.d], hashfn.Extend(h, coinExtension))
	}
	b := &t.buckets[cs[w]]
	if e := ctrl(b.ctrl.Load()).empty(t.capMask); e != 0 {
		b.put(slotOf(e), k, v, tag)
	} else {
		t.stash.put(k, v)
		t.buckets[cs[0]].sync.addHint(+1)
	}
	t.entries.Add(1)
}

// coinExtension is the Extend word whose top half breaks ties among more
// than two candidates; candidates 2 to 7 use extension words 1 to 3.
const coinExtension = hashfn.MaxChoices/2 + 1

// delete removes k if the table holds it and reports whether it did.
func (t *table[K, V]) delete(k K, h uint64, tag uint8) bool {
	var c [hashfn.MaxChoices]uint64
	cs := t.candidates(h, &c)
	for _, i := range cs {
		b := &t.buckets[i]
		if j := b.find(k, tag); j >= 0 {
			b.remove(j)
			t.entries.Add(-1)
			return true
		}
	}
	if t.stash.len() > 0 && t.stash.has(k) {
		t.stash.remove(k)
		t.buckets[cs[0]].sync.addHint(-1)
		t.entries.Add(-1)
		return true
	}
	return false
}

// load returns the number of keys in bucket i.
func (t *table[K, V]) load(i uint64) uint32 {
	return uint32(ctrl(t.buckets[i].ctrl.Load()).load())
}
