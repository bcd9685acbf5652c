package store

// Growth of a cache's table: a cache allocates its table as entries arrive.
//
// A cache's final table has as many slots as its bound (cacheSize) and
// evicts. A cache whose final table is large starts with a table of
// growStartSlots slots instead and doubles it, as a Map doubles, through
// the sizes cacheLevels lists, until the next doubling would come within a
// quarter of the final size: the next table is then the final one. A table
// on the way never evicts. It grows when its entries pass the rule's
// utilization threshold (thresholds, as a Map's), or when a new key finds
// all its candidates full, whichever comes first. So an empty cache of
// 10M entries takes the memory of 1,024 slots, and a full one what its
// final table takes, as if it had been allocated whole.
//
// A cache's writers lock buckets, not the cache, so the growth coordinates
// with them through the table's frozen flag: the writer that finds the
// table past its threshold takes the cache's mutex, allocates the next
// table while other writers go on, then sets frozen on the old table and
// takes and releases every old bucket's lock in turn. A writer checks
// frozen after it has locked its buckets, so one that locked a bucket
// before the sweep reached it finishes first (the sweep waits for its
// lock), and one that locks after finds frozen set and changes nothing:
// it waits for the mutex, loads the new table and writes there (awaitTable).
// After the sweep no one writes the old table, and the growth copies its
// entries into the new one, publishes it and releases the mutex. Writers
// wait while the entries are copied (about 50 ns an entry: 0.25 s for the
// last growth of a 10M-entry cache, 2 ms for a 100,000-entry one); readers
// never wait: until the new table is published they read the old one,
// which no one changes, so what they read is the cache as it was when the
// growth began, and a read that overlaps the growth is ordered before it.
//
// A full cache pays for all this one predictable branch per write: the
// load of frozen, in the table's header that the write reads anyway. Its
// reads pay nothing.
//
// The same replacement serves Clear (a new first table, without a copy)
// and SetMaximum (a copy into a table of the new bound, which may evict).
//
// Entries move in eight passes over the old buckets, by the low bits of
// their tags, for the reason a Map's growth does (grow.go): keys arriving
// bucket by bucket would be correlated with their candidates. An entry
// keeps its value, expiry and policy word; expired entries are dropped.
// Placed by the rule, an entry whose candidates are full in a table on the
// way makes the copy start over into the next size, so that no growth
// evicts; into the final table, the policy picks the victim among the
// candidates' entries and the newcomer (SetMaximum shrinking a cache).

import (
	"math"
)

// growStartSlots is the slots of a large cache's first table: 1,024
// entries, some 40 KiB for string → int64 entries.
const growStartSlots = 1024

// cacheLevels returns the sizes of the tables a cache of options o fills
// before its final one, smallest first: none for a cache whose final table
// is not much larger than the first. They have BucketSize slots a bucket
// (the final table may have one fewer in some buckets, or more in all:
// cacheSize).
func cacheLevels(o *config) []uint64 {
	nf, _, _, err := cacheSize(o)
	if err != nil {
		return nil
	}
	var out []uint64
	c := uint64(o.BucketSize)
	for n := sizeAtLeast(o, (growStartSlots+c-1)/c); 4*n < 3*nf; {
		out = append(out, n)
		next := sizeAtLeast(o, 2*n)
		if next <= n {
			break
		}
		n = next
	}
	return out
}

// cacheSizes returns every size a table of a cache of options o may have:
// cacheLevels, then the final size.
func cacheSizes(o *config) []uint64 {
	nf, _, _, err := cacheSize(o)
	if err != nil {
		return nil
	}
	return append(cacheLevels(o), nf)
}

// sizesFor returns the sizes a cache of options o tries for a table that
// holds entries: the first on its path whose threshold holds them, and
// every size after it.
func sizesFor(o *config, entries int64) []uint64 {
	all := cacheSizes(o)
	for x, n := range all[:len(all)-1] {
		if maxE, _ := thresholds(o, n); maxE >= entries {
			return all[x:]
		}
	}
	return all[len(all)-1:]
}

// sizesAfter returns the sizes of sizes, in increasing order, above n.
func sizesAfter(sizes []uint64, n uint64) []uint64 {
	for x, m := range sizes {
		if m > n {
			return sizes[x:]
		}
	}
	return nil
}

// configOf returns the cache's options with the bound of table t (which
// SetMaximum changes).
func (s *Cache[K, V]) configOf(t *cacheTable[K, V]) config {
	o := s.cfg
	o.MaxEntries = t.bound
	return o
}

// startTable returns the first table of a cache of options o.
func (s *Cache[K, V]) startTable(o *config) *cacheTable[K, V] {
	return s.newTable(o, cacheSizes(o)[0])
}

// newTable returns an empty table of n buckets for the cache, of options
// o, with the weights' slots if the cache has a weight bound.
func (s *Cache[K, V]) newTable(o *config, n uint64) *cacheTable[K, V] {
	t := newCacheTable[K, V](o, s.lay, n, s.tq)
	if s.wsum != nil {
		t.wts = make([]slotWeights, n)
		t.wsum = s.wsum
	}
	return t
}

// awaitTable waits for the table that replaces a frozen one: a writer that
// found its table frozen calls it, then loads the new table and writes
// there.
func (s *Cache[K, V]) awaitTable() {
	s.mu.Lock()
	//lint:ignore SA2001 an empty critical section: waiting for the holder is the point
	s.mu.Unlock()
}

// freeze sets t's frozen flag and waits for the writers that locked one of
// its buckets before they could see it. The caller holds s.mu.
func (s *Cache[K, V]) freeze(t *cacheTable[K, V]) {
	t.frozen.Store(true)
	for i := range t.n {
		t.cbucket(i).b.sync.lock()
		t.unlockBucket(i)
	}
}

// grow replaces t, a table on the way to the final one that passed its
// threshold or could not place a key, with the next table on the path. It
// returns at once if t is no longer the cache's table (another writer grew
// it, or Clear replaced it).
func (s *Cache[K, V]) grow(t *cacheTable[K, V]) {
	s.mu.Lock()
	if s.tab.Load() != t || t.final {
		s.mu.Unlock()
		return
	}
	o := s.configOf(t)
	sizes := sizesAfter(cacheSizes(&o), t.n)
	// Allocated before the freeze, while writers go on: zeroing the new
	// table is the larger part of the work.
	first := s.newTable(&o, sizes[0])
	s.freeze(t)
	nt := s.rebuild(t, &o, sizes, first)
	s.tab.Store(nt)
	s.mu.Unlock()
	s.flushReports()
}

// report records, if the cache has a deletion listener, an entry that a
// replacement of the table removed; the caller holds s.mu, and reports
// them with flushReports once it has released it.
func (s *Cache[K, V]) report(k K, v V, cause DeletionCause) {
	if s.onDel != nil {
		s.pending = append(s.pending, DeletionEvent[K, V]{Key: k, Value: v, Cause: cause})
	}
}

// flushReports calls the deletion listener for the entries that
// replacements of the table removed, if any.
func (s *Cache[K, V]) flushReports() {
	if s.onDel == nil {
		return
	}
	s.mu.Lock()
	evs := s.pending
	s.pending = nil
	s.mu.Unlock()
	for _, ev := range evs {
		s.onDel(ev)
	}
}

// rebuild copies the entries of t, frozen, into the first table of the
// given sizes that takes them all without evicting, or into the last,
// which evicts where it must, and returns it. first, if not nil, is a
// table of sizes[0], allocated. The caller holds s.mu.
func (s *Cache[K, V]) rebuild(t *cacheTable[K, V], o *config, sizes []uint64, first *cacheTable[K, V]) *cacheTable[K, V] {
	for x, n := range sizes {
		nt := first
		if x > 0 || nt == nil {
			nt = s.newTable(o, n)
		}
		if s.copyInto(nt, t, x == len(sizes)-1) {
			return nt
		}
	}
	panic("store: a cache's final table refused an entry") // the last size evicts
}

// copyInto places the live entries of t into nt, which no one else sees
// yet, and reports whether it placed them all; evict says to make room by
// the policy where an entry's candidates are full (else copyInto gives up
// there). t is frozen: its slots are read plainly, its policy words and
// expiries atomically, as readers may still touch them.
func (s *Cache[K, V]) copyInto(nt, t *cacheTable[K, V], evict bool) bool {
	var nowNanos int64
	ttl := s.ttl.Load()
	if ttl {
		nowNanos = s.nowNanos()
	}
	now := s.tickNow(0)
	r := s.pol.current()
	st := s.tot.stripe(stripeHint())
	// A copy that gives up reports nothing and counts nothing: the copy
	// into the next size meets the same expired entries.
	reported := len(s.pending)
	expired := uint64(0)
	// The weight of the entries the copy drops, taken off the cache's
	// total only if the copy is kept.
	var dropped int64
	// The weights of the expired entries, for the stats recorder.
	var expiredW []uint32
	var c [8]uint64
	for pass := range uint64(8) {
		for i := range t.n {
			cb := t.cbucket(i)
			for m := ctrl(cb.b.ctrl.Load()).full(); m != 0; m &= m - 1 {
				j := slotOf(m)
				if uint64(ctrl(cb.b.ctrl.Load()).at(j))&7 != pass {
					continue
				}
				exp := t.meta[i].exp[j].Load()
				e := &cb.b.slots[j]
				var w uint32
				if t.wts != nil {
					w = t.wts[i][j]
				}
				if ttl && exp != 0 && exp <= nowNanos {
					expired++
					if s.rec != nil {
						expiredW = append(expiredW, t.weightAt(i, j))
					}
					s.report(e.key, e.val, DeletionExpired)
					dropped += int64(w)
					continue
				}
				acc := cb.acc[j].Load()
				var wr int64
				if t.wrote != nil {
					wr = t.wrote[i].at[j].Load()
				}
				h := nt.hash(e.key)
				cs := nt.cands(h, &c)
				if !s.place(nt, cs, e.key, e.val, h, exp, wr, acc, w, evict, now, r) {
					if !evict {
						s.pending = s.pending[:reported]
						return false
					}
					st.evictions.Add(1)
					s.recordEviction(DeletionEvicted, t.weightAt(i, j))
					s.report(e.key, e.val, DeletionEvicted)
					dropped += int64(w)
				}
			}
		}
	}
	st.expirations.Add(expired)
	for _, w := range expiredW {
		s.recordEviction(DeletionExpired, w)
	}
	if dropped != 0 {
		nt.wsum.sum.Add(-dropped)
	}
	return true
}

// place puts an entry into table nt, which no one else sees yet, at the
// candidate the rule picks among cs, with its expiry, its write time wr
// (for a table that keeps them) and policy word acc.
// If the candidates are full it returns false unless evict says to make
// room: then the policy's victim among the candidates' entries and the
// newcomer goes (into nt's ghost), and place reports false if that is the
// newcomer.
//
// w is the entry's weight in a cache bounded by weight; a victim's weight
// comes off the cache's total as it goes, the newcomer's is the caller's
// to take off if place refuses it.
func (s *Cache[K, V]) place(nt *cacheTable[K, V], cs []uint64, k K, v V, h uint64, exp, wr int64, acc, w uint32, evict bool, now uint64, r *rank) bool {
	var loads [8]uint32
	for x, i := range cs {
		loads[x] = uint32(ctrl(nt.cbucket(i).b.ctrl.Load()).load() + nt.size - slotsOf(nt.capAt(i)))
	}
	i := cs[nt.choose(loads[:nt.d], h)]
	cb := nt.cbucket(i)
	e := ctrl(cb.b.ctrl.Load()).empty(nt.capAt(i))
	if e == 0 {
		if !evict {
			return false
		}
		vi, vj, expired := s.victim(nt, cs, now, r)
		vb := nt.cbucket(vi)
		if !expired {
			vs, vage := r.score(vb.acc[vj].Load(), now)
			ns, nage := r.score(acc, now)
			if ns > vs || ns == vs && nage > vage {
				nt.gh.put(h, acc, now)
				return false
			}
			nt.gh.put(nt.hash(vb.b.slots[vj].key), vb.acc[vj].Load(), now)
			s.tot.stripe(stripeHint()).evictions.Add(1)
			s.recordEviction(DeletionEvicted, nt.weightAt(vi, vj))
			s.report(vb.b.slots[vj].key, vb.b.slots[vj].val, DeletionEvicted)
		} else {
			s.tot.stripe(stripeHint()).expirations.Add(1)
			s.recordEviction(DeletionExpired, nt.weightAt(vi, vj))
			s.report(vb.b.slots[vj].key, vb.b.slots[vj].val, DeletionExpired)
		}
		nt.clearSlot(vi, vj)
		i, cb = vi, vb
		e = ctrl(cb.b.ctrl.Load()).empty(nt.capAt(i))
	}
	j := slotOf(e)
	cb.b.ref().put(j, k, v, tagOf(h), nt.lay)
	cb.acc[j].Store(acc)
	nt.meta[i].exp[j].Store(exp)
	if nt.wts != nil {
		nt.wts[i][j] = w
	}
	if nt.wrote != nil {
		nt.wrote[i].at[j].Store(wr)
	}
	nt.live.Add(1)
	return true
}

// noGrowth is growAt for a table that never grows.
const noGrowth = math.MaxInt64
