package store

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/twochoice/twochoice/internal/snapshot"
)

// Copy-on-write views: how Save takes a consistent snapshot while other
// goroutines keep reading and writing.
//
// A view is the contents of one table at one instant, the snapshot
// instant, taken without stopping the store. At that instant (under the
// store's mutex, so between two writes) Save marks every bucket uncopied
// and copies the stash, which is small. From then on a bucket's
// pre-snapshot contents leave the table exactly once, by whichever comes
// first:
//
//   - the walker (Save) reaches the bucket, claims it and copies it; or
//   - a writer is about to change one of its key's candidate buckets (a
//     write changes no other bucket): it claims and copies each candidate
//     not yet copied into the view's pending list (cowTouch) before it
//     changes anything.
//
// Each bucket has a 2-bit state in the view: uncopied, being copied (by
// the walker), copied. Claiming is a compare-and-swap from uncopied. A
// writer that finds the walker copying a bucket waits for that one copy
// to end; the walker takes no store-wide lock (writers already exclude
// each other with the store's mutex, and a claimed bucket is changed by no
// one until its copy is done), and waits for writers only at the end, for
// copies in flight (settle). So every bucket is copied as it was at the
// snapshot instant, the view is one consistent point in time, and apart
// from the backpressure below no writer waits for more than the copy of
// one bucket. Readers never wait at all. The pending list has its own
// small lock, held to append to it and to hand it over; the file side
// (encoder and bbolt transaction) has another, which the walker holds
// while it writes a bucket's records.
//
// Backpressure. When writers copy buckets faster than the walker writes
// them, the pending list would hold the old contents of most of the
// store. Past pendingBound entries a writer that copies a bucket writes it
// to the file itself, if the file side is free and the records fit in the
// open transaction (assist): the work on one bucket, after waiting at most
// for the walker's current bucket (or a transaction commit, once per
// TxBytes of records). That is backpressure: writers that change buckets
// faster than the file takes them slow down to its pace, instead of
// piling up the old contents of the store.
//
// Growth. Keys moving between two tables would defeat a per-bucket copy,
// so a map's view holds a pin (Map.pin): a growth under way is finished first,
// in small batches, and no new growth starts until the view ends; keys
// whose candidates fill up meanwhile go to the stash, and the table grows
// at the first Set of a new key after. Clear during a view installs a new
// table and leaves the viewed one untouched, so the view stays what it
// was.
//
// Memory. The pending list holds shallow copies of slots (a string or
// slice shares its bytes with the store; the old value of an entry changed
// since is kept alive by it), only for buckets written before the walker
// reached them; the walker drains it at every bucket, and writers keep it
// near pendingBound. Apart from that a view costs 2 bits per bucket, and
// the file side one bbolt transaction (TxBytes of records).
//
// The contract for code that changes a table: hold the store's mutex, and
// call cowTouch with the key's hash before changing any of its candidate
// buckets or the stash. The cache mode's writers (Set, Delete, eviction,
// expiry), which hold bucket locks instead, call cowTouchLocked with the
// buckets they hold, after taking the locks and before changing anything.

// cowView is one snapshot being taken.
type cowView[K comparable, V any] struct {
	t visited[K, V]
	n uint64 // t's buckets
	// locked: the table's writers hold bucket locks instead of a
	// table-wide mutex (a cache's), so the walker claims and copies each
	// bucket under its lock (cowView.next).
	locked bool
	state  []atomic.Uint64 // 2 bits per bucket: uncopied, copying, copied

	mu         sync.Mutex        // guards pending and counts
	pending    []viewEntry[K, V] // copied by writers, not yet taken by the walker
	maxPending int               // the longest the pending list got
	// counts[p][k]: buckets of part p that held k entries at the instant
	// (those copied by writers; the walker keeps its own).
	counts [][]uint64

	stash []viewEntry[K, V] // the stash at the snapshot instant

	// The file side: whoever holds out encodes entries and appends them to
	// the snapshot, the walker or a writer that assists (see assist).
	out sync.Mutex
	w   *snapshot.Writer
	enc *snapshot.Encoder[K, V]
	err error // the first error of a writer's assist
}

// pendingBound is the size of the pending list past which writers assist:
// they write the buckets they copy to the file themselves instead of
// handing them to the walker. Without it, writers that change many
// buckets faster than the walker writes them (random updates over the
// whole store, say) pile up the old contents of most of the store in
// memory: at a million entries, 80% of the store's heap, measured. A
// variable so that tests can make writers assist all the time.
var pendingBound = 4096

// viewDone, if set (by a benchmark), is told at the end of each view
// the longest its pending list got.
var viewDone func(maxPending int)

// Bucket states in a view.
const (
	uncopied = 0
	copying  = 1
	copied   = 2
	perWord  = 32 // 2-bit states per word
)

// viewEntry is one entry of a view, with its place in the table.
type viewEntry[K comparable, V any] struct {
	key    K
	val    V
	expiry int64 // Unix nanoseconds; 0: never
	bucket int64 // the bucket's index, or stashIndex
}

// stashIndex is the bucket recorded for an entry in the stash.
const stashIndex = -1

// newView returns a view of table t, to be written to w; locked says
// whether t's writers hold bucket locks (a cache's). The caller pins t
// (a map's must not grow), copies its stash at the snapshot instant into
// the view's stash, and publishes the view for its writers.
func newView[K comparable, V any](t visited[K, V], locked bool, parts int, w *snapshot.Writer) *cowView[K, V] {
	n := t.geom().n
	return &cowView[K, V]{t: t, n: n, locked: locked, state: make([]atomic.Uint64, (n+perWord-1)/perWord),
		w: w, enc: snapshot.NewEncoder[K, V](), counts: newCounts(parts)}
}

// beginView pins the table and starts a view of it. The caller must call
// endView.
func (s *Map[K, V]) beginView(w *snapshot.Writer) *cowView[K, V] {
	t := s.pin()
	v := newView[K, V](t, false, s.cfg.Placement.Parts(s.cfg.Choices), w)
	s.mu.Lock()
	// Writers take the serialized path while the view lasts, feeding it
	// the buckets they change (cowTouch).
	s.closeGate()
	// The snapshot instant. The stash is copied now: it is bounded
	// (thresholds), a few hundred entries for a million keys.
	t.stash.mu.RLock()
	for k, val := range t.stash.m {
		v.stash = append(v.stash, viewEntry[K, V]{key: k, val: val, bucket: stashIndex})
	}
	t.stash.mu.RUnlock()
	s.view.Store(v)
	s.mu.Unlock()
	return v
}

// beginView starts a view of the cache's table. The caller must call
// endView.
func (s *Cache[K, V]) beginView(w *snapshot.Writer) *cowView[K, V] {
	s.mu.Lock() // no Clear replaces the table in between
	v := newView[K, V](s.tab.Load(), true, s.cfg.Placement.Parts(s.cfg.Choices), w)
	s.view.Store(v)
	s.mu.Unlock()
	return v
}

func newCounts(parts int) [][]uint64 {
	c := make([][]uint64, parts)
	for p := range c {
		c[p] = make([]uint64, slotsPerBucket+1)
	}
	return c
}

// endView ends the view and unpins the table. Once it returns no writer
// writes to the view's file, which the caller may then commit or abort.
func (s *Map[K, V]) endView(v *cowView[K, V]) {
	s.mu.Lock()
	if s.view.CompareAndSwap(v, nil) {
		s.openGate()
	}
	s.mu.Unlock()
	v.end()
	s.unpin()
}

// endView ends the view. Once it returns no writer writes to the view's
// file, which the caller may then commit or abort.
func (s *Cache[K, V]) endView(v *cowView[K, V]) {
	s.mu.Lock()
	s.view.CompareAndSwap(v, nil)
	s.mu.Unlock()
	v.end()
}

// end stops the view's file side, once the view is no longer published.
// A cache's writers hold bucket locks, not a mutex of the owner's, and one
// that loaded the view before it ended may be assisting, or about to: end
// waits for it, and stops the file side for the rest. (A walk that
// finished has claimed every bucket and settled, so no assist is left; one
// that stopped early, canceled or failed, has not, and its file is aborted
// next, under a writer still appending to it.)
func (v *cowView[K, V]) end() {
	if viewDone != nil {
		viewDone(v.maxPending)
	}
	v.out.Lock()
	if v.err == nil {
		v.err = errViewEnded
	}
	v.out.Unlock()
}

// errViewEnded stops the assists of writers that come after the view
// ended; no one reads it.
var errViewEnded = errors.New("store: snapshot view ended")

// claim tries to move bucket i from uncopied to copying, and returns the
// state it found.
func (v *cowView[K, V]) claim(i uint64) uint64 {
	w := &v.state[i/perWord]
	sh := 2 * (i % perWord)
	for {
		old := w.Load()
		st := old >> sh & 3
		if st != uncopied {
			return st
		}
		if w.CompareAndSwap(old, old|copying<<sh) {
			return uncopied
		}
	}
}

// done moves bucket i from copying to copied.
func (v *cowView[K, V]) done(i uint64) {
	v.state[i/perWord].Add((copied - copying) << (2 * (i % perWord)))
}

func (v *cowView[K, V]) stateOf(i uint64) uint64 {
	return v.state[i/perWord].Load() >> (2 * (i % perWord)) & 3
}

// settle waits until no bucket is being copied. The walker calls it after
// its last bucket, when every bucket has been claimed: a writer that
// claimed one has then finished its copy, and put it in the pending list
// or in the file.
func (v *cowView[K, V]) settle() {
	const copyingBits = 0x5555555555555555 // the low bit of each state: copying
	for w := range v.state {
		for x := 0; v.state[w].Load()&copyingBits != 0; x++ {
			backoff(x)
		}
	}
}

// cowTouch is called by a writer, holding s.mu, before it changes any
// candidate bucket of the key with hash h in table t.
func (s *Map[K, V]) cowTouch(t *table[K, V], h uint64) {
	v := s.view.Load()
	if v == nil || v.t != visited[K, V](t) {
		return
	}
	var c [8]uint64
	v.touch(t.candidates(h, &c))
}

// cowTouchLocked is cowTouch for a cache writer: it holds the locks of
// buckets (which it is about to change) instead of a mutex. The walker
// claims and copies a cache's bucket under that bucket's lock too
// (cowView.next), so a bucket is never being copied by the walker while a
// writer holds it, and a writer that loaded no view (before the snapshot
// instant) finishes its change before the walker can copy the bucket: its
// write is part of the snapshot, as if it had happened just before the
// instant, while no one could see the bucket.
//
// Written so that it is inlined into the cache's Set: the check is all
// that a Set pays while no snapshot is being taken.
func (s *Cache[K, V]) cowTouchLocked(t *cacheTable[K, V], buckets []uint64) {
	if s.view.Load() != nil {
		s.cowTouchView(t, buckets)
	}
}

// cowTouchView is cowTouchLocked while a snapshot is being taken.
func (s *Cache[K, V]) cowTouchView(t *cacheTable[K, V], buckets []uint64) {
	if v := s.view.Load(); v != nil && v.t == visited[K, V](t) {
		v.touch(buckets)
	}
}

// touch copies, for a writer, each of buckets not yet copied.
func (v *cowView[K, V]) touch(buckets []uint64) {
	g := v.t.geom()
	for _, i := range buckets {
		switch v.claim(i) {
		case uncopied:
			if v.assist(i) {
				continue
			}
			v.mu.Lock()
			n := len(v.pending)
			v.pending = v.copyBucket(i, v.pending)
			v.maxPending = max(v.maxPending, len(v.pending))
			v.counts[g.gen.PartOf(i)][len(v.pending)-n]++
			v.mu.Unlock()
			v.done(i)
		case copying:
			// The walker is copying it: wait for that one copy.
			for x := 0; v.stateOf(i) != copied; x++ {
				backoff(x)
			}
		}
	}
}

// assist copies bucket i, claimed by the caller, straight to the file if
// the pending list is long, and reports whether it did. It waits for the
// file side, which the walker holds for one bucket's records at a time
// (or, once per TxBytes of records, for a transaction's commit). It
// writes only records that fit in the open transaction, so it never
// commits one itself; what does not fit goes to the pending list.
func (v *cowView[K, V]) assist(i uint64) bool {
	v.mu.Lock()
	busy := len(v.pending) >= pendingBound
	v.mu.Unlock()
	if !busy {
		return false
	}
	v.out.Lock()
	var buf [slotsPerBucket]viewEntry[K, V]
	es := v.copyBucket(i, buf[:0])
	x := 0
	for ; x < len(es) && v.err == nil; x++ {
		e := &es[x]
		rec, err := v.enc.EncodeRecord(e.key, e.val, e.expiry, e.bucket)
		if err != nil {
			v.err = fmt.Errorf("snapshot %s: %w", v.w.Path(), err)
			break
		}
		if !v.w.Fits(len(rec)) {
			break
		}
		if err := v.w.Append(rec); err != nil {
			v.err = err
		}
	}
	v.out.Unlock()
	v.mu.Lock()
	v.pending = append(v.pending, es[x:]...)
	v.maxPending = max(v.maxPending, len(v.pending))
	v.counts[v.t.geom().gen.PartOf(i)][len(es)]++
	v.mu.Unlock()
	v.done(i)
	clear(es)
	return true
}

// copyBucket appends bucket i's entries to dst. The caller has claimed the
// bucket, so no writer changes it meanwhile.
func (v *cowView[K, V]) copyBucket(i uint64, dst []viewEntry[K, V]) []viewEntry[K, V] {
	b := v.t.bucket(i)
	for m := ctrl(b.ctrl.Load()).full(); m != 0; m &= m - 1 {
		j := slotOf(m)
		e := &b.slots[j]
		dst = append(dst, viewEntry[K, V]{key: e.key, val: e.val, expiry: v.t.expiryOf(i, j), bucket: int64(i)})
	}
	return dst
}

// next copies bucket i into dst unless a writer did (counting its
// load in counts), and hands over what writers copied since the last call,
// leaving spare (emptied) in its place for them to fill.
func (v *cowView[K, V]) next(i uint64, dst, spare []viewEntry[K, V], counts [][]uint64) (own, taken []viewEntry[K, V]) {
	// A cache's writers hold bucket locks, not a mutex of the owner's,
	// and one that came before the snapshot instant may still be changing
	// the bucket: the walker claims and copies a cache's bucket under its
	// lock (cowTouchLocked).
	var b bref[K, V]
	if v.locked {
		b = v.t.bucket(i)
		b.sync.lock()
	}
	if v.claim(i) == uncopied {
		n := len(dst)
		dst = v.copyBucket(i, dst)
		v.done(i)
		counts[v.t.geom().gen.PartOf(i)][len(dst)-n]++
	}
	if v.locked {
		b.sync.unlock()
	}
	v.mu.Lock()
	taken, v.pending = v.pending, spare[:0]
	v.mu.Unlock()
	return dst, taken
}
