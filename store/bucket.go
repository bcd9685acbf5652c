package store

import "sync/atomic"

// slot holds one entry. Key and value sit side by side with no header, so
// a string→int64 slot is 24 bytes, as in Go's own map.
type slot[K comparable, V any] struct {
	key K
	val V
}

// A bucketOf is BucketSize slots (room for 8) behind a control word and a
// sync word: 16 bytes of header per 8 slots. The header and the first slots
// share a cache line, so the lock-free tag check and the lock touch the
// line that the slot read needs anyway.
//
// Who writes what: the slots and the control word change only under the
// exclusive lock; the control word is also stored atomically, so a reader
// may check tags without the lock; the sync word is only touched
// atomically. Per-slot metadata that later features need (a clock bit, an
// expiry) belongs beside the slots, in the slot or in a parallel word like
// ctrl, so that the one-cache-line header stays as it is.
type bucketOf[K comparable, V any] struct {
	ctrl  atomic.Uint64
	sync  syncWord
	slots [slotsPerBucket]slot[K, V]
}

// get looks k up in the bucket under its read lock, after the caller saw
// a tag match. It reports the value and whether it found k, and the sync
// word after the unlock (for draining counters).
func (b *bucketOf[K, V]) get(k K, tag uint8) (v V, ok bool, w uint64) {
	b.sync.rlock()
	for m := ctrl(b.ctrl.Load()).match(tag); m != 0; m &= m - 1 {
		s := &b.slots[slotOf(m)]
		if s.key == k {
			v = s.val
			return v, true, b.sync.runlock(true)
		}
	}
	return v, false, b.sync.runlock(false)
}

// find returns the slot of k in the bucket, or -1. Only writers call it:
// they are serialized, and readers never write slots, so it needs no lock.
func (b *bucketOf[K, V]) find(k K, tag uint8) int {
	for m := ctrl(b.ctrl.Load()).match(tag); m != 0; m &= m - 1 {
		if j := slotOf(m); b.slots[j].key == k {
			return j
		}
	}
	return -1
}

// put writes k and v into empty slot j, then publishes the slot's tag. It
// needs no lock, and taking none keeps the two locked instructions of the
// lock and unlock off every insert (they also stop the CPU from
// overlapping the cache misses of consecutive inserts when a growth moves
// keys). Why it is safe: a reader reads a slot only after loading, under
// the bucket's read lock, a control word in which the slot is full. Slot j
// is empty now, and it was emptied (by remove, under the exclusive lock,
// which waited for every reader inside) before any current reader took the
// lock, so no reader is reading it; and a reader that sees the new tag
// loaded the control word after the atomic store below, which orders the
// slot's write before its read.
func (b *bucketOf[K, V]) put(j int, k K, v V, tag uint8) {
	b.slots[j] = slot[K, V]{k, v}
	b.ctrl.Store(uint64(ctrl(b.ctrl.Load()).withSlot(j, tag)))
}

// update replaces the value in slot j.
func (b *bucketOf[K, V]) update(j int, v V) {
	b.sync.lock()
	b.slots[j].val = v
	b.sync.unlock()
}

// remove empties slot j and zeroes it, so the entry's memory can be
// collected.
func (b *bucketOf[K, V]) remove(j int) {
	b.sync.lock()
	b.ctrl.Store(uint64(ctrl(b.ctrl.Load()).withSlot(j, 0)))
	b.slots[j] = slot[K, V]{}
	b.sync.unlock()
}

// snapshot copies the bucket's entries into dst under the read lock and
// returns how many it copied: a consistent view of one bucket, taken
// without stopping any other bucket. Iteration, the load report and later
// the snapshot writer visit the table this way, bucket by bucket.
func (b *bucketOf[K, V]) snapshot(dst *[slotsPerBucket]slot[K, V]) int {
	b.sync.rlock()
	n := 0
	for m := ctrl(b.ctrl.Load()).full(); m != 0; m &= m - 1 {
		dst[n] = b.slots[slotOf(m)]
		n++
	}
	b.sync.runlock(false)
	return n
}
