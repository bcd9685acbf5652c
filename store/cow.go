package store

// Copy-on-write views: how Save takes a consistent snapshot while other
// goroutines keep reading and writing.
//
// A view is the contents of one table at one instant, the snapshot
// instant, taken without stopping the store. At that instant (under the
// store's mutex, so between two writes) Save marks every bucket "not yet
// copied" and copies the stash, which is small. From then on a bucket's
// pre-snapshot contents leave the table exactly once, by whichever comes
// first:
//
//   - the walker (Save) reaches the bucket: it takes the store's mutex,
//     copies the bucket if no writer did, and releases the mutex; or
//   - a writer is about to change one of its key's candidate buckets (a
//     write can change no other bucket): holding the store's mutex as
//     every writer does, it first copies each candidate that is not yet
//     copied into the view's pending list (cowTouch).
//
// So every bucket is copied as it was at the snapshot instant, and the
// view is one consistent point in time. No caller waits for more than the
// copy of one bucket: the walker holds the mutex for one bucket at a time
// and encodes and writes records after releasing it, and a writer copies
// at most d buckets, once each per snapshot. Readers never wait at all:
// they take no lock the view uses.
//
// Growth. Keys moving between two tables would defeat a per-bucket copy,
// so a view holds a pin (Store.pin): a growth under way is finished first,
// in small batches, and no new growth starts until the view ends; keys
// whose candidates fill up meanwhile go to the stash, and the table grows
// at the first write after. Clear during a view installs a new table and
// leaves the viewed one untouched, so the view stays what it was.
//
// Memory. The pending list holds shallow copies of slots (a string or
// slice shares its bytes with the store), only for buckets written before
// the walker reached them, and the walker drains it at every bucket.
// Apart from that a view costs one bit per bucket.
//
// The contract for code that changes a table (the cache mode's eviction
// and expiry included): hold the store's mutex, and call cowTouch with the
// key's hash before changing any of its candidate buckets or the stash.

// cowView is one snapshot being taken.
type cowView[K comparable, V any] struct {
	t       *table[K, V]
	copied  []uint64          // bit i: bucket i has left the table
	pending []viewEntry[K, V] // copied by writers, not yet taken by the walker
	stash   []viewEntry[K, V] // the stash at the snapshot instant
	// counts[p][k]: buckets of part p that held k entries at the instant.
	counts [][]uint64
}

// viewEntry is one entry of a view, with its place in the table.
type viewEntry[K comparable, V any] struct {
	key    K
	val    V
	expiry int64 // Unix nanoseconds; 0: never
	bucket int64 // the bucket's index, or stashIndex
}

// stashIndex is the bucket recorded for an entry in the stash.
const stashIndex = -1

// beginView pins the table and starts a view of it. The caller must call
// endView.
func (s *Store[K, V]) beginView() *cowView[K, V] {
	t := s.pin()
	v := &cowView[K, V]{t: t, copied: make([]uint64, (t.n+63)/64)}
	parts := s.opts.Placement.Parts(s.opts.Choices)
	v.counts = make([][]uint64, parts)
	for p := range v.counts {
		v.counts[p] = make([]uint64, slotsPerBucket+1)
	}
	s.mu.Lock()
	// The snapshot instant. The stash is copied now: it is bounded
	// (thresholds), a few hundred entries for a million keys.
	t.stash.mu.RLock()
	for k, val := range t.stash.m {
		v.stash = append(v.stash, viewEntry[K, V]{key: k, val: val, expiry: s.entryExpiry(t, stashIndex, 0, k), bucket: stashIndex})
	}
	t.stash.mu.RUnlock()
	s.view = v
	s.mu.Unlock()
	return v
}

// endView ends the view and unpins the table.
func (s *Store[K, V]) endView(v *cowView[K, V]) {
	s.mu.Lock()
	if s.view == v {
		s.view = nil
	}
	s.mu.Unlock()
	s.unpin()
}

// cowTouch is called by a writer, holding s.mu, before it changes any
// candidate bucket of the key with hash h in table t.
func (s *Store[K, V]) cowTouch(t *table[K, V], h uint64) {
	v := s.view
	if v == nil || v.t != t {
		return
	}
	var c [8]uint64
	for _, i := range t.candidates(h, &c) {
		v.pending = v.copyBucket(s, i, v.pending)
	}
}

// copyBucket appends bucket i's entries to dst, unless the bucket has
// already been copied, and marks it copied. The caller holds s.mu, so no
// writer changes the bucket meanwhile.
func (v *cowView[K, V]) copyBucket(s *Store[K, V], i uint64, dst []viewEntry[K, V]) []viewEntry[K, V] {
	w, bit := i/64, uint64(1)<<(i%64)
	if v.copied[w]&bit != 0 {
		return dst
	}
	v.copied[w] |= bit
	b := v.t.bucket(i)
	n := 0
	for m := ctrl(b.ctrl.Load()).full(); m != 0; m &= m - 1 {
		j := slotOf(m)
		e := &b.slots[j]
		dst = append(dst, viewEntry[K, V]{key: e.key, val: e.val, expiry: s.entryExpiry(v.t, int64(i), j, e.key), bucket: int64(i)})
		n++
	}
	v.counts[v.t.gen.PartOf(i)][n]++
	return dst
}

// viewNext takes bucket i (if no writer copied it) into dst, and hands
// over what writers copied since the last call, leaving spare (emptied) in
// its place for them to fill. It holds the store's mutex for the copy of
// one bucket: the hand-over is a swap of slices.
func (s *Store[K, V]) viewNext(v *cowView[K, V], i uint64, dst, spare []viewEntry[K, V]) (own, taken []viewEntry[K, V]) {
	s.mu.Lock()
	dst = v.copyBucket(s, i, dst)
	taken, v.pending = v.pending, spare[:0]
	s.mu.Unlock()
	return dst, taken
}

// entryExpiry returns the expiry of an entry, in Unix nanoseconds (0:
// never): slot j of bucket i of table t, or key k in t's stash when i is
// stashIndex. The caller holds s.mu. The store has no expiry yet; the
// cache mode fills this in.
func (s *Store[K, V]) entryExpiry(t *table[K, V], i int64, j int, k K) int64 {
	_, _, _, _ = t, i, j, k
	return 0
}

// restoreExpiry sets the expiry of an entry that Open has just placed, as
// entryExpiry reads it. The store has no expiry yet; the cache mode fills
// this in.
func (s *Store[K, V]) restoreExpiry(t *table[K, V], i int64, j int, k K, expiry int64) {
	_, _, _, _, _ = t, i, j, k, expiry
}
