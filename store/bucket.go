package store

import "sync/atomic"

// slot holds one entry. Key and value sit side by side with no header, so
// a string→int64 slot is 24 bytes, as in Go's own map. The leading
// zero-size field gives the slot word alignment, so that optimistic reads
// can copy it word by word with atomic operations (seqlock_unsafe.go).
type slot[K comparable, V any] struct {
	_   [0]uint64
	key K
	val V
}

// A bucket is BucketSize slots (room for 8) and a header of two words,
// its control word and its sync word (bucketHdr). A map keeps its headers
// in an array of their own, four to a cache line, beside the array of its
// slots (table.go), so that a lookup loads its candidates' headers, two
// lines that cover 8 buckets' worth of tags each, and then only the slot
// a tag names. A cache keeps header and slots together (bucketOf, in
// cacheBucket), behind the slots' policy words, which a Set reads with the
// header. A bref names a bucket of either: its header and its slots.
//
// Who writes what: writers change the control word with atomic stores, so
// a reader may check tags without a lock. A full slot is changed (update)
// or emptied (remove) only under the bucket's exclusive lock, which moves
// the version on; an empty slot is filled without it (put). For slots read
// optimistically, every write to a slot that a reader may be reading is
// made of atomic word stores (storeSlot).
type bucketHdr struct {
	ctrl atomic.Uint64
	sync syncWord
}

// group is a bucket's slots.
type group[K comparable, V any] [slotsPerBucket]slot[K, V]

// bref is a bucket: its header and its slots, wherever they are stored.
// It is two pointers, passed by value.
type bref[K comparable, V any] struct {
	*bucketHdr
	slots *group[K, V]
}

// A bucketOf is a header and its slots side by side: 16 bytes of header
// per 8 slots, so the header shares a cache line with the first slots. A
// cache's buckets are laid out so (cacheBucket).
type bucketOf[K comparable, V any] struct {
	bucketHdr
	slots group[K, V]
}

// ref returns b as a bref.
func (b *bucketOf[K, V]) ref() bref[K, V] { return bref[K, V]{&b.bucketHdr, &b.slots} }

// A cacheBucket is a cache's bucket: the slots' policy words (evict.go)
// right before the bucket's control and sync words. The 48-byte header,
// which every cache Set loads first, is one cache line for the buckets
// that start in the first 16 bytes of a line and two for the others: in
// a slice of their own, the policy words would be one more line, and one
// more miss, for every candidate of every Set and Get
// (BenchmarkCacheSetRatio, BenchmarkCacheGetRatio). A map keeps plain
// buckets, which spares it 4 bytes an entry.
type cacheBucket[K comparable, V any] struct {
	acc [slotsPerBucket]atomic.Uint32
	b   bucketOf[K, V]
}

// slotMeta is what a cache keeps of each slot beside the bucket: its
// expiry (read only when ttl says some entry may have one) and its policy
// word. A lookup reads them in the same consistent view as the slot; a
// map's lookups pass nil.
type slotMeta struct {
	exp *[slotsPerBucket]atomic.Int64
	acc *[slotsPerBucket]atomic.Uint32
	ttl bool
}

// found is what a lookup found of a key: its slot, value, and, with a
// slotMeta, its expiry and policy word.
type found[V any] struct {
	slot int
	val  V
	exp  int64
	acc  uint32
}

// get looks k up in the bucket: optimistically for the layouts that allow
// it, else under the read lock.
func (b bref[K, V]) get(k K, tag uint8, l wordLayout) (V, bool) {
	f, ok := b.lookup(k, tag, l, nil)
	return f.val, ok
}

// lookup looks k up in the bucket, with the slot's metadata if meta is
// not nil: optimistically for the layouts that allow it, else under the
// read lock.
func (b bref[K, V]) lookup(k K, tag uint8, l wordLayout, meta *slotMeta) (found[V], bool) {
	if l.words > 0 {
		return b.getOptimistic(k, tag, l, meta)
	}
	return b.getLocked(k, tag, meta)
}

// getOptimistic reads the bucket until it gets a consistent view: the
// sync word, then the control word, then the slots whose tag matches, each
// checked against the sync word before it is used (readMatch).
func (b bref[K, V]) getOptimistic(k K, tag uint8, l wordLayout, meta *slotMeta) (found[V], bool) {
	for {
		s := b.sync.begin()
		m := ctrl(b.ctrl.Load()).match(tag)
		if f, ok, valid := b.readMatch(k, m, s, l, meta); valid {
			return f, ok
		}
	}
}

// readMatch looks for k among the slots flagged in m, which the caller
// found in a control word it loaded after the sync word s. Each candidate
// slot is copied with atomic loads (with its metadata, if meta is not
// nil), and the copy is used only if the sync word still equals s
// afterwards: then no writer changed or emptied a full slot since s, and
// the copy is one whole entry (seqlock_unsafe.go). valid is false when a
// writer got in the way and the caller must read again.
func (b bref[K, V]) readMatch(k K, m, s uint64, l wordLayout, meta *slotMeta) (f found[V], ok, valid bool) {
	if s&writerBit != 0 {
		return f, false, false
	}
	for ; m != 0; m &= m - 1 {
		x := slotOf(m)
		var e slot[K, V]
		readSlot(&e, &b.slots[x], l)
		var xp int64
		var a uint32
		if meta != nil {
			if meta.ttl {
				xp = meta.exp[x].Load()
			}
			a = meta.acc[x].Load()
		}
		if b.sync.v.Load() != s {
			return f, false, false
		}
		if e.key == k {
			return found[V]{slot: x, val: e.val, exp: xp, acc: a}, true, true
		}
	}
	return f, false, true
}

// getLocked looks k up under the bucket's read lock, after checking the
// tags without it: a bucket without a matching tag costs no write.
func (b bref[K, V]) getLocked(k K, tag uint8, meta *slotMeta) (f found[V], ok bool) {
	if ctrl(b.ctrl.Load()).match(tag) == 0 {
		return f, false
	}
	b.sync.rlock()
	for m := ctrl(b.ctrl.Load()).match(tag); m != 0; m &= m - 1 {
		if x := slotOf(m); b.slots[x].key == k {
			f, ok = found[V]{slot: x, val: b.slots[x].val}, true
			if meta != nil {
				f.exp, f.acc = meta.exp[x].Load(), meta.acc[x].Load()
			}
			break
		}
	}
	b.sync.runlock()
	return f, ok
}

// find returns the slot of k in the bucket, or -1. Only writers call it,
// holding what keeps other writers off the bucket (a map's mutex, or the
// bucket's lock: a cache's writers, and a map's while its gate is open);
// readers never write slots, so it
// reads them plainly.
func (b bref[K, V]) find(k K, tag uint8) int {
	for m := ctrl(b.ctrl.Load()).match(tag); m != 0; m &= m - 1 {
		if j := slotOf(m); b.slots[j].key == k {
			return j
		}
	}
	return -1
}

// put writes k and v into empty slot j, then publishes the slot's tag. It
// needs no lock, and taking none keeps two locked instructions off every
// insert. Why it is safe:
//
//   - No reader uses a slot before it loads a control word in which the
//     slot is full, after the atomic store below, which orders the slot's
//     write before its read.
//   - A slot that was never full in this table (control byte emptyFresh)
//     has never been read by anyone: it is written with plain stores.
//   - A slot that was emptied (emptyUsed) may still be read by an
//     optimistic reader that saw it full before remove. Such a reader
//     loaded the sync word before remove moved the version on, so it will
//     discard what it read; but it reads concurrently with this write, so
//     the write is made of atomic word stores, for the race detector and
//     so that no word is torn. Readers of the locked path are not an issue:
//     remove waited for all of them under the exclusive lock.
//
// The tag is published with storeRelease, not an atomic store: on amd64
// an atomic store waits for the slot's write, usually a cache miss, to
// reach the cache, and that wait is nearly all of put's time in a growing
// map's Set (BenchmarkSetGrowingRatio). storeRelease is enough because the
// control word has one writer at a time: the holder of the map's mutex
// (while its gate is closed), a writer holding the bucket's lock (while
// it is open: fastpath.go), or the only goroutine that sees the table
// (the restorer).
func (b bref[K, V]) put(j int, k K, v V, tag uint8, l wordLayout) {
	c := ctrl(b.ctrl.Load())
	if e := (slot[K, V]{key: k, val: v}); l.words > 0 && c.at(j) == emptyUsed {
		storeSlot(&b.slots[j], &e, 0, l)
	} else {
		b.slots[j] = e
	}
	storeRelease(&b.ctrl, uint64(c.withSlot(j, tag)))
}

// update replaces the value in slot j under the exclusive lock.
func (b bref[K, V]) update(j int, v V, l wordLayout) {
	b.sync.lock()
	b.updateLocked(j, v, l)
	b.sync.unlock()
}

// updateLocked replaces the value in slot j; the caller holds the bucket.
func (b bref[K, V]) updateLocked(j int, v V, l wordLayout) {
	if l.words > 0 {
		e := slot[K, V]{key: b.slots[j].key, val: v}
		storeSlot(&b.slots[j], &e, l.val, l)
	} else {
		b.slots[j].val = v
	}
}

// remove empties slot j and zeroes it, so the entry's memory can be
// collected.
func (b bref[K, V]) remove(j int, l wordLayout) {
	b.sync.lock()
	b.removeLocked(j, l)
	b.sync.unlock()
}

// removeLocked is remove for a caller that holds the bucket.
func (b bref[K, V]) removeLocked(j int, l wordLayout) {
	b.ctrl.Store(uint64(ctrl(b.ctrl.Load()).withSlot(j, emptyUsed)))
	var zero slot[K, V]
	if l.words > 0 {
		storeSlot(&b.slots[j], &zero, 0, l)
	} else {
		b.slots[j] = zero
	}
}

// snapshot copies the bucket's entries into dst and returns how many it
// copied: a consistent view of one bucket, taken without stopping any
// other bucket (optimistically, or under the read lock). Iteration, the
// load report and snapshots visit the table this way, bucket by bucket.
func (b bref[K, V]) snapshot(dst *[slotsPerBucket]slot[K, V], l wordLayout) int {
	return b.snapshotExp(dst, nil, nil, l)
}

// snapshotExp is snapshot that also copies, when me is not nil, each
// entry's expiry from me (the bucket's expiry words) into exps, in the
// same consistent view.
func (b bref[K, V]) snapshotExp(dst *[slotsPerBucket]slot[K, V], me *[slotsPerBucket]atomic.Int64, exps *[slotsPerBucket]int64, l wordLayout) int {
	if l.words == 0 {
		b.sync.rlock()
		n := 0
		for m := ctrl(b.ctrl.Load()).full(); m != 0; m &= m - 1 {
			j := slotOf(m)
			dst[n] = b.slots[j]
			if me != nil {
				exps[n] = me[j].Load()
			}
			n++
		}
		b.sync.runlock()
		return n
	}
	for {
		s := b.sync.begin()
		n := 0
		for m := ctrl(b.ctrl.Load()).full(); m != 0; m &= m - 1 {
			j := slotOf(m)
			loadSlot(&dst[n], &b.slots[j], l)
			if me != nil {
				exps[n] = me[j].Load()
			}
			n++
		}
		if b.sync.v.Load() == s {
			return n
		}
	}
}
