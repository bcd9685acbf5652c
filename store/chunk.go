package store

// Buckets are allocated in chunks of chunkSize, 208 KiB for string→int64
// entries. A growth needs the whole new table before it can move a key
// into it, and allocating a table of millions of buckets in one call
// stalls the Set that triggers it for tens to hundreds of milliseconds:
// zeroing hundreds of megabytes, and the garbage collector charging the
// allocating goroutine with marking work in proportion. So the store
// prepares the next table while the current one approaches its threshold,
// one chunk per write (Map.prepare), and the growth itself allocates
// nothing big. A lookup pays one more load: the chunk's slice header, from
// a small array that stays in cache.
const (
	chunkBits = 10
	chunkSize = 1 << chunkBits
)

// bucket returns bucket i.
func (t *table[K, V]) bucket(i uint64) bref[K, V] {
	return bref[K, V]{chunkElem(t.hdrs, i), chunkElem(t.groups, i)}
}

// group returns bucket i's slots.
func (t *table[K, V]) group(i uint64) *group[K, V] { return chunkElem(t.groups, i) }

// hdr returns bucket i's header.
func (t *table[K, V]) hdr(i uint64) *bucketHdr { return chunkElem(t.hdrs, i) }

// prepWindow is how many inserts before its threshold a table starts to
// prepare the next one, of next buckets: two for each of its chunks, and
// some to spare, so the next table is whole before the threshold.
func prepWindow(next uint64) int64 {
	return 2*int64((next+chunkSize-1)/chunkSize) + 64
}

// allocNext allocates the next chunk, if any is missing.
func (t *table[K, V]) allocNext() {
	if t.ready < len(t.hdrs) {
		lo := uint64(t.ready) * chunkSize
		n := min(chunkSize, t.n-lo)
		h, g := make([]bucketHdr, n), make([]group[K, V], n)
		// Write the chunk once, now. Memory fresh from the operating
		// system is not zeroed by Go, so its pages are not mapped yet: the
		// first access to a page would be a growth's read of a control
		// word, which maps the shared zero page, and the first write would
		// then fault again to copy it and flush the other cores' TLBs. A
		// write first takes one fault per page.
		clear(h)
		clear(g)
		t.hdrs[t.ready], t.groups[t.ready] = h, g
		t.ready++
	}
}

// allocRest allocates every missing chunk.
func (t *table[K, V]) allocRest() {
	for t.ready < len(t.hdrs) {
		t.allocNext()
	}
}

// prepare, called by a write that added a key and did not start a
// growth, allocates one chunk of the table the current one t will grow
// into, once t is within prepWindow entries of its threshold; by the time
// it gets there the next table is whole. Starting late keeps the next
// table's memory from being held long before it is used. The caller holds
// s.mu.
//
// The size is the one grow will pick (growTo). While a visitor pins t,
// keys keep coming past the threshold, and the size grow picks moves up
// the growth path with them: a prepared table they have outgrown is
// dropped and the right one prepared instead, where the Set that grows
// the table after a long pin would otherwise allocate the whole of it at
// once (about 25 ms for 200,000 keys). The sizes on the path grow geometrically, so
// the dropped tables add up to less than the one finally used.
func (s *Map[K, V]) prepare(t *table[K, V]) {
	if s.prep != nil && t.entries.Load() > s.prepTo {
		s.prep = nil
	}
	if s.flood.pending != nil {
		s.prepareRekey(t)
		return
	}
	if s.prep == nil {
		next := t.next
		if next == t.n || t.entries.Load() < t.prepAt {
			return
		}
		// Within the threshold growTo is nextSize; past it only a pin
		// keeps t from growing. Asked only then, so that an ordinary
		// insert does not pay for growTo's thresholds.
		if t.entries.Load() > t.maxEntries {
			next = growTo(&s.cfg, t.n, t.entries.Load())
		}
		s.prep = newTableFn[K, V](&s.cfg, next, s.lay, false, t.hasher)
		s.prepTo = growLimit(&s.cfg, t.n, next)
	}
	s.prep.allocNext()
}
