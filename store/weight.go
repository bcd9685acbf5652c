package store

// A weight bound: a cache with CacheOptions.MaxWeight keeps the total
// weight of its entries, as CacheOptions.Weigher weighs them, at or below
// that bound at every instant, beside its bound in entries.
//
// The total is one counter, weightSum, that holds the weights of the
// entries plus the weights that writers in flight have reserved. A writer
// of a new value reserves its weight before it takes any bucket lock: it
// adds the weight to the counter with a compare-and-swap that succeeds
// only if the sum stays within the bound, and while it would not, it
// evicts an entry and tries again. The entry it stores turns the
// reservation into its own weight; what it replaces or removes, and a
// reservation it ends up not using, it subtracts. Since no entry is stored
// without a reservation and every reservation fits, the weights of the
// entries never add up to more than the bound, which a reader of Weight
// can check at any time.
//
// Room is made by sampling: the writer locks buckets drawn at random (no
// other lock held, so no order to keep with other writers) and evicts the
// entry of their slots that the eviction policy ranks lowest, expired
// entries first, as a new key's eviction ranks the entries of its
// candidates. It draws buckets until they hold 16 entries (up to eight
// buckets), as many as a new key's two candidates of eight slots offer, so
// an eviction for weight is as well informed as one for room in a bucket,
// in a full table or a sparse one. The sample is uniform over buckets, not
// over entries, so entries in less loaded buckets are a little more likely
// to be sampled; with two choices the loads are nearly equal (the point of
// the table), which keeps that bias small.
//
// The weights of the entries are kept beside the slots (tableWeights),
// only in the tables of a cache bounded by weight, so that removing an
// entry subtracts the weight it was stored with even if the Weigher would
// weigh it differently now.

import (
	"math/bits"
	"runtime"
	"sync/atomic"

	"github.com/twochoice/twochoice/hashfn"
)

// weightSum is the total weight of a cache's entries and of the
// reservations in flight; padded so that the writers' compare-and-swap on
// it does not take the lines of the fields beside it.
type weightSum struct {
	_   [cacheLine]byte
	sum atomic.Int64
	// draws counts evictSample's calls, the source of the buckets it
	// draws.
	draws atomic.Uint64
	_     [cacheLine - 16]byte
}

// slotWeights are the weights of a bucket's entries, by slot; written and
// read under the bucket's lock (or in a table no one writes).
type slotWeights [slotsPerBucket]uint32

// release subtracts the weight of the entry in slot j of bucket i, which
// the caller holds and is about to remove or overwrite, from the cache's
// total, and forgets it.
func (t *cacheTable[K, V]) release(i uint64, j int) {
	if t.wts == nil {
		return
	}
	w := &t.wts[i][j]
	if *w != 0 {
		t.wsum.sum.Add(-int64(*w))
		*w = 0
	}
}

// weightAt returns the weight of the entry in slot j of bucket i, which
// the caller holds: 1 in a cache without a weight bound, as the stats
// recorder counts an entry there.
func (t *cacheTable[K, V]) weightAt(i uint64, j int) uint32 {
	if t.wts == nil {
		return 1
	}
	return t.wts[i][j]
}

// weighed records that the entry now in slot j of bucket i weighs w, of
// which the writer reserved res; the caller holds the bucket and has
// released what the slot held before. It subtracts what the writer
// reserved beyond w: weighed's caller reserved at least w.
func (t *cacheTable[K, V]) weighed(i uint64, j int, w, res uint32) {
	if t.wts == nil {
		return
	}
	t.wts[i][j] = w
	if res > w {
		t.wsum.sum.Add(-int64(res - w))
	}
}

// weigh returns the weight of k with value v for a cache bounded by
// weight.
func (s *Cache[K, V]) weigh(k K, v V) uint32 { return s.weigher(k, v) }

// tryReserve adds w to the cache's total if the total stays within
// MaxWeight, and reports whether it did.
func (s *Cache[K, V]) tryReserve(w uint32) bool {
	for {
		cur := s.wsum.sum.Load()
		if cur+int64(w) > s.cfg.MaxWeight {
			return false
		}
		if s.wsum.sum.CompareAndSwap(cur, cur+int64(w)) {
			return true
		}
	}
}

// reserve adds w, at most MaxWeight, to the cache's total, evicting
// entries until it fits. The caller holds no bucket lock. If there is
// nothing to evict, the weight that stands in the way is reserved by
// writers in flight, and reserve yields until they are done.
func (s *Cache[K, V]) reserve(w uint32) {
	for !s.tryReserve(w) {
		if !s.evictSample() {
			runtime.Gosched()
		}
	}
}

// reservation is a writer's reservation of weight in a cache bounded by
// weight, carried through setCache: res is reserved and not yet any
// entry's; w is the weight of the value to store (a Compute's, once its
// function has decided); need, set by setCache, is what the writer must
// reserve more before it tries again; refused is set when the value
// weighs more than MaxWeight, which is then val.
type reservation[V any] struct {
	w, res, need uint32
	refused      bool
	val          V
}

// unreserve gives back what rv holds and no entry took; rv may be nil
// (a cache without a weight bound).
func (s *Cache[K, V]) unreserve(rv *reservation[V]) {
	if rv != nil && rv.res != 0 {
		s.wsum.sum.Add(-int64(rv.res))
		rv.res = 0
	}
}

// reweigh records rv's weight for the entry just stored in slot j of
// bucket i, which the caller holds, in place of the weight of the entry
// the slot held (if any); rv's reservation is spent.
func (t *cacheTable[K, V]) reweigh(i uint64, j int, rv *reservation[V]) {
	if rv == nil {
		return
	}
	t.release(i, j)
	t.weighed(i, j, rv.w, rv.res)
	rv.res = 0
}

// What weighComputed found.
const (
	weightFits    = iota // rv holds the value's weight
	weightMore           // rv.need more must be reserved first
	weightRefused        // the value weighs more than MaxWeight
)

// weighComputed weighs the value v that a Compute's function decided to
// store for k, under k's buckets' locks, and makes rv hold its weight if
// the bound allows without evicting (an eviction would take other
// buckets' locks, which must not be taken while these are held).
func (s *Cache[K, V]) weighComputed(k K, v V, rv *reservation[V]) int {
	w := s.weigh(k, v)
	switch {
	case int64(w) > s.cfg.MaxWeight:
		rv.refused, rv.val, rv.w = true, v, w
		return weightRefused
	case w > rv.res:
		if !s.tryReserve(w - rv.res) {
			rv.need = w - rv.res
			return weightMore
		}
		rv.res = w
	}
	rv.w = w
	return weightFits
}

// reportComputed reports, after a Compute released its locks, the entry
// it replaced or removed (ev, if its Cause is set) and, if its value was
// refused for its weight, that value as evicted at once; and gives back
// what rv holds unused, unless the Compute is to try again with more.
func (s *Cache[K, V]) reportComputed(k K, ev DeletionEvent[K, V], rv *reservation[V]) {
	if rv != nil && rv.need == 0 {
		s.unreserve(rv)
	}
	if rv != nil && rv.refused {
		s.recordEviction(DeletionEvicted, rv.w)
	}
	if s.onDel == nil {
		return
	}
	if ev.Cause != 0 {
		s.onDel(ev)
	}
	if rv != nil && rv.refused {
		s.onDel(DeletionEvent[K, V]{Key: k, Value: rv.val, Cause: DeletionEvicted})
	}
}

// setWeighted is setCache in a cache bounded by weight: it reserves the
// weight of a Set's value before setCache takes any lock, and for a
// Compute whose value needs more than it reserved, reserves that and
// tries again (the function is then called again, as its doc says).
func (s *Cache[K, V]) setWeighted(k K, v V, h uint64, tag uint8, exp int64, cf *computeOf[V]) (V, bool) {
	var rv reservation[V]
	if cf == nil || cf.fn == nil {
		rv.w = s.weigh(k, v)
		if int64(rv.w) > s.cfg.MaxWeight {
			if cf != nil { // GetOrSet: a live entry is returned, a hit
				if old, ok := s.Peek(k); ok {
					s.tot.hit(stripeHint())
					return old, true
				}
			}
			s.refuse(k, v, rv.w, h, tag)
			return v, false
		}
		s.reserve(rv.w)
		rv.res = rv.w
	}
	for {
		r, ok := s.setCache(k, v, h, tag, exp, cf, &rv)
		if rv.need == 0 {
			return r, ok
		}
		s.reserve(rv.need)
		rv.res += rv.need
		rv.need = 0
	}
}

// sampleBucket returns bucket n of evictSample's draw d in a table of
// size buckets, for the cache's seed: uniform over the table, and a
// function of its arguments alone.
func sampleBucket(seed, d uint64, n int, size uint64) uint64 {
	i, _ := bits.Mul64(hashfn.Mix(seed^(d*hashfn.MaxChoices+uint64(n))), size)
	return i
}

// sampleEntries is how many entries evictSample looks at, if the buckets it
// may lock at once hold that many: as many as a new key's two candidates
// of eight slots offer its eviction.
const sampleEntries = 2 * slotsPerBucket

// evictSample evicts the lowest ranked entry of buckets drawn at random,
// and reports whether it evicted one (false: the buckets were empty, or
// the table was being replaced, which the caller retries alike). The
// caller holds no bucket lock.
//
// The draws are pseudo-random from the cache's seed and the count of
// calls (weightSum.draws, sampleBucket), not from a generator of the
// process's, so the sampling adds no randomness beyond the seed: the
// buckets a cache's n-th sample draws are the same in every run with its
// seed. (Which entry goes also depends on the policy's clock, which
// counts per stripe of the writers' stacks, clock.go.)
func (s *Cache[K, V]) evictSample() bool {
	t := s.tab.Load()
	// Buckets are drawn until they hold sampleEntries entries (by their
	// control words, read without a lock) or there are as many as a lock
	// set takes: a sparse table, a cache whose weight bound holds far
	// fewer entries than MaxEntries, gets as large a sample as a full one.
	var cs [hashfn.MaxChoices]uint64
	n, seen := 0, 0
	d := s.wsum.draws.Add(1)
	for n < len(cs) && seen < sampleEntries {
		i := sampleBucket(s.cfg.Seed, d, n, t.n)
		cs[n] = i
		n++
		seen += ctrl(t.cbucket(i).b.ctrl.Load()).load()
	}
	var lk locked
	lockAll(&lk, t, cs[:n])
	if t.frozen.Load() {
		unlockAll(&lk, t)
		s.awaitTable()
		return true
	}
	hint := stripeHint()
	now := s.tickNow(hint)
	var ev DeletionEvent[K, V]
	evicted := false
	var victimKey K
	var victimAcc, vw uint32
	if vi, vj, expired, ok := s.victimOf(t, lk.idx[:lk.n], now, s.pol.current()); ok {
		s.cowTouchLocked(t, lk.idx[:lk.n])
		cb := t.cbucket(vi)
		e := &cb.b.slots[vj]
		st := s.tot.stripe(hint)
		cause := DeletionEvicted
		if expired {
			cause = DeletionExpired
			st.expirations.Add(1)
		} else {
			st.evictions.Add(1)
			victimKey, victimAcc = e.key, cb.acc[vj].Load()
		}
		ev = DeletionEvent[K, V]{Key: e.key, Value: e.val, Cause: cause}
		evicted = true
		vw = t.weightAt(vi, vj)
		t.clearSlot(vi, vj)
	}
	unlockAll(&lk, t)
	if !evicted {
		return false
	}
	s.recordEviction(ev.Cause, vw)
	if ev.Cause == DeletionEvicted {
		t.gh.put(t.hash(victimKey), victimAcc, now)
	}
	if s.onDel != nil {
		s.onDel(ev)
	}
	return true
}

// refuse handles a value heavier than MaxWeight: it is not stored, and
// counts as stored and evicted at once (Stats, the deletion listener with
// DeletionEvicted). An entry k had goes, as a Set of k would replace it
// (DeletionReplaced), so that no Get returns a value older than the one
// refused.
func (s *Cache[K, V]) refuse(k K, v V, w uint32, h uint64, tag uint8) {
	var (
		c  [hashfn.MaxChoices]uint64
		lk locked
	)
	t, cs := s.lockCandidates(h, &c, &lk)
	var old DeletionEvent[K, V]
	var oldW uint32
	for _, i := range cs {
		if j := t.bucket(i).find(k, tag); j >= 0 {
			s.cowTouchLocked(t, lk.idx[:lk.n])
			old = s.leaving(t, i, j, DeletionReplaced)
			oldW = t.weightAt(i, j)
			t.clearSlot(i, j)
			break
		}
	}
	st := s.tot.stripe(stripeHint())
	st.updates.Add(1) // a Set...
	st.evictions.Add(1)
	if old.Cause == DeletionExpired {
		// The entry it replaces had expired: an expiration, as the
		// listener hears.
		st.expirations.Add(1)
	}
	unlockAll(&lk, t)
	if old.Cause == DeletionExpired {
		s.recordEviction(DeletionExpired, oldW)
	}
	s.recordEviction(DeletionEvicted, w)
	if s.onDel != nil {
		if old.Cause != 0 {
			s.onDel(old)
		}
		s.onDel(DeletionEvent[K, V]{Key: k, Value: v, Cause: DeletionEvicted})
	}
}

// Weight returns the total weight of the cache's entries, as
// CacheOptions.Weigher weighed them when they were stored, together with
// the weights that writers in flight have reserved for the values they are
// storing: never more than CacheOptions.MaxWeight. At idle it is the sum
// of the entries' weights. A cache without MaxWeight returns 0.
func (s *Cache[K, V]) Weight() uint64 {
	if s.wsum == nil {
		return 0
	}
	return uint64(s.wsum.sum.Load())
}

// weighAll weighs the entries of t, a table just restored that no one
// else sees yet, adds their weights to the cache's total and, if that is
// over MaxWeight (a file saved under a larger bound, or a Weigher that
// weighs differently), evicts until it is not.
func (s *Cache[K, V]) weighAll(t *cacheTable[K, V]) {
	var sum int64
	for i := range t.n {
		b := t.bucket(i)
		for m := ctrl(b.ctrl.Load()).full(); m != 0; m &= m - 1 {
			j := slotOf(m)
			w := s.weigh(b.slots[j].key, b.slots[j].val)
			t.wts[i][j] = w
			sum += int64(w)
		}
	}
	s.wsum.sum.Add(sum)
	for s.wsum.sum.Load() > s.cfg.MaxWeight {
		s.evictSample()
	}
}

// leaving returns the event of the entry in slot j of bucket i, which the
// caller holds and is about to replace or remove for cause: expired
// instead if its time to live has passed.
func (s *Cache[K, V]) leaving(t *cacheTable[K, V], i uint64, j int, cause DeletionCause) DeletionEvent[K, V] {
	e := &t.cbucket(i).b.slots[j]
	if _, expired := s.expiryOf(t, i, j); expired {
		cause = DeletionExpired
	}
	return DeletionEvent[K, V]{Key: e.key, Value: e.val, Cause: cause}
}
