package store

import (
	"fmt"
	"sync/atomic"

	"github.com/twochoice/twochoice/hashfn"
)

// cacheTable is a cache's table. A cache's final table, the one that
// evicts, has exactly as many slots as the cache's bound: n buckets of
// BucketSize slots, n the smallest size the rule accepts that is at least
// MaxEntries / BucketSize, and the first short buckets one slot fewer (and
// all of them fewer still if the rule rounded n up a lot), so that Len can
// never pass MaxEntries and no cache-wide count has to be consulted to know
// it. There is no stash: a key whose candidates are full takes a victim's
// slot (evict.go). A large cache fills smaller tables first, which never
// evict: each grows into the next when it passes its threshold
// (cache_grow.go).
type cacheTable[K comparable, V any] struct {
	hasher[K]
	geometry

	// frozen is set when the table is being replaced (a growth, Clear,
	// SetMaximum): a writer that finds it set under its bucket locks
	// changes nothing and writes again to the table that replaces it
	// (cache_grow.go). Read by every writer, written once: kept with the
	// fields a Set reads anyway, away from live.
	frozen atomic.Bool
	// final: the table holds the cache's bound and evicts; otherwise it
	// grows when its entries pass growAt or a new key finds its
	// candidates full.
	final  bool
	growAt int64 // math.MaxInt64 for a final table
	bound  int   // the cache's bound (MaxEntries) when the table was made

	// gh remembers the policy words of the keys this table evicted
	// (ghost.go), sized for the table: a table that replaces another of
	// the same size may share its words.
	gh ghost

	// The buckets with their policy words, in chunks of chunkSize (as a
	// map's, so that no single allocation is larger than a chunk).
	chunks [][]cacheBucket[K, V]
	// meta holds the slots' expiries, bucket by bucket.
	meta []bucketMeta
	// wts holds the slots' weights, bucket by bucket, and wsum is the
	// cache's total, in a cache bounded by weight (weight.go); nil in
	// others.
	wts  []slotWeights
	wsum *weightSum
	// wrote holds the slots' write times, for CacheOptions.RefreshAfter
	// (cache_refresh.go); nil in a cache without it.
	wrote []bucketWrites

	short uint64 // the buckets below short have one slot fewer than size
	lay   wordLayout
	// prefetch: a Get and a Set prefetch every line of both candidates,
	// as the buckets are too many to stay in a core's L2 (bigCacheTable).
	prefetch bool

	// live counts the entries. The bucket locks guard the writes, so
	// there is no cache-wide count to contend for but this one add.
	live atomic.Int64
}

// bucketMeta is what the cache keeps beside a bucket's slots other than
// their policy words (which live in the bucket, bucket.go): the
// expiries, in a slice beside the buckets rather than in them, so that
// unbounded stores do not pay for them, and so that a store without TTLs
// never loads them. There is no hash beside the slots: a victim, whose
// word the ghost keeps (ghost.go), has its key hashed again, which costs
// less than writing a hash to another cache line on every insert.
type bucketMeta struct {
	// exp is when each entry expires, in Unix nanoseconds by the store's
	// clock; 0 means never. Snapshots save it as it is (see
	// table.entriesOf).
	exp [slotsPerBucket]atomic.Int64
}

// cacheSize returns the buckets of a cache of max entries, and how the
// slots are spread over them: every bucket has size slots except the first
// short ones, which have one fewer. Where rounding the table up to a size
// the rule accepts (a prime, a multiple of d) would leave buckets without
// a slot, which happens only for buckets of one or two slots, it takes
// fewer, larger buckets instead (up to 8 slots). It fails if even that
// leaves a bucket without a slot: MaxEntries below d, or a little above.
func cacheSize(o *config) (n uint64, size int, short uint64, err error) {
	c := uint64(o.BucketSize)
	maxE := uint64(o.MaxEntries)
	n = sizeAtLeast(o, (maxE+c-1)/c)
	for n > maxE && c < slotsPerBucket {
		c++
		n = sizeAtLeast(o, (maxE+c-1)/c)
	}
	if n > maxE {
		return 0, 0, 0, fmt.Errorf("%w: MaxEntries %d is below the %d buckets that %v with %d choices needs",
			ErrOptions, o.MaxEntries, n, o.Placement, o.Choices)
	}
	deficit := n*c - maxE
	size = int(c - deficit/n)
	return n, size, deficit % n, nil
}

// histogramLoads is the length of a snapshot's histogram rows for a
// table of n buckets of a store of options o: loads 0 to the most slots a
// bucket has (table.size). That is BucketSize, except in the final table
// of a cache that cacheSize gave fewer, larger buckets.
func histogramLoads(o *config, n uint64) int {
	if o.MaxEntries > 0 {
		if nf, size, _, err := cacheSize(o); err == nil && n == nf {
			return size + 1
		}
	}
	return o.BucketSize + 1
}

// newCacheTable returns a table of n buckets for a cache of resolved
// options o, allocated: its final table if n is the size cacheSize gives
// for o.MaxEntries, else a table on the way there (cacheLevels), of
// BucketSize slots a bucket. tq is the cache's policy tick unit (evict.go),
// for the ghost.
func newCacheTable[K comparable, V any](o *config, lay wordLayout, n uint64, tq uint8) *cacheTable[K, V] {
	nf, size, short, err := cacheSize(o)
	if err != nil {
		panic("store: " + err.Error()) // the options' resolve checked it
	}
	fn, err := hashfn.New(o.Hash, o.Seed)
	if err != nil {
		panic("store: " + err.Error()) // the options' resolve checked it
	}
	t := &cacheTable[K, V]{hasher: hasherOf[K](fn), geometry: newGeometry(o, n), lay: lay, bound: o.MaxEntries}
	t.chunks = make([][]cacheBucket[K, V], (n+chunkSize-1)/chunkSize)
	for c := range t.chunks {
		t.chunks[c] = make([]cacheBucket[K, V], min(chunkSize, n-uint64(c)*chunkSize))
	}
	slots := o.MaxEntries
	if t.final = n == nf; t.final {
		t.size = size
		t.capMask = capMaskOf(size)
		t.short = short
		t.growAt = noGrowth
	} else {
		slots = int(n) * o.BucketSize
		t.growAt, _ = thresholds(o, n)
	}
	t.gh.init(slots, uint64(slots)>>tq)
	t.meta = make([]bucketMeta, n)
	if o.RefreshAfter > 0 {
		t.wrote = make([]bucketWrites, n)
	}
	t.prefetch = bigCacheTable[K, V](n)
	return t
}

// slots returns the number of slots of the table.
func (t *cacheTable[K, V]) slots() int64 { return int64(t.n)*int64(t.size) - int64(t.short) }

// cbucket returns bucket i with its policy words.
func (t *cacheTable[K, V]) cbucket(i uint64) *cacheBucket[K, V] { return chunkElem(t.chunks, i) }

// bucket returns bucket i without its policy words, for the code that
// visits a table of either type (views, iteration, the load report).
func (t *cacheTable[K, V]) bucket(i uint64) bref[K, V] { return t.cbucket(i).b.ref() }

// load returns the number of entries in bucket i.
func (t *cacheTable[K, V]) load(i uint64) uint32 {
	return uint32(ctrl(t.cbucket(i).b.ctrl.Load()).load())
}

// capAt returns the mask of the slots bucket i may use.
func (t *cacheTable[K, V]) capAt(i uint64) uint64 {
	if i < t.short {
		return capMaskOf(t.size - 1)
	}
	return t.capMask
}

// lookup finds k in bucket i and returns its slot, value, expiry and
// policy word: optimistically for the layouts that allow it (the expiry
// and the policy word are read inside the same version check as the
// slot), else under the read lock. It reads the expiry only if ttl says
// some entry may have one.
//
// The optimistic loop is bref.getOptimistic's and readMatch's, written out
// for the cache's Get as get2 is for the map's: through the two calls, a
// Get takes 8% more instructions (cachegrind, 1M Zipf Gets on a cache of
// 20,000 string keys: 668 against 614 a Get).
func (t *cacheTable[K, V]) lookup(i uint64, k K, tag uint8, ttl bool) (f found[V], ok bool) {
	cb := t.cbucket(i)
	b := cb.b.ref()
	meta := slotMeta{exp: &t.meta[i].exp, acc: &cb.acc, ttl: ttl}
	l := t.lay
	if l.words == 0 {
		return b.getLocked(k, tag, &meta)
	}
	for {
		s := b.sync.begin()
		m := ctrl(b.ctrl.Load()).match(tag)
		valid := true
		for ; m != 0; m &= m - 1 {
			x := slotOf(m)
			var e slot[K, V]
			readSlot(&e, &b.slots[x], l)
			var xp int64
			if ttl {
				xp = meta.exp[x].Load()
			}
			a := meta.acc[x].Load()
			if b.sync.v.Load() != s {
				valid = false
				break
			}
			if e.key == k {
				return found[V]{slot: x, val: e.val, exp: xp, acc: a}, true
			}
		}
		if valid {
			return f, false
		}
	}
}

// lockAll takes the distinct buckets of cs exclusively, in increasing
// order.
func lockAll[K comparable, V any](lk *locked, t *cacheTable[K, V], cs []uint64) {
	lk.set(cs)
	for _, i := range lk.idx[:lk.n] {
		t.cbucket(i).b.sync.lock()
	}
}

// unlockAll releases what lockAll took.
func unlockAll[K comparable, V any](lk *locked, t *cacheTable[K, V]) {
	for _, i := range lk.idx[:lk.n] {
		t.unlockBucket(i)
	}
}

// unlockBucket releases a cache writer's hold on bucket i: without a
// read-modify-write when the slot type is read optimistically, since then
// no reader writes the sync word (syncWord.unlockAlone).
func (t *cacheTable[K, V]) unlockBucket(i uint64) {
	if t.lay.words > 0 {
		t.cbucket(i).b.sync.unlockAlone()
	} else {
		t.cbucket(i).b.sync.unlock()
	}
}

// update replaces the value in slot j of bucket i, which holds k; the
// caller holds the bucket. It counts as an access. ttl is the store's ttl
// flag, loaded after taking the bucket: while it is false, every expiry
// word of the bucket is 0 and stays so.
func (t *cacheTable[K, V]) update(i uint64, j int, k K, v V, exp int64, ttl bool, now uint64, slack uint32, pol *policy) {
	cb := t.cbucket(i)
	b := cb.b.ref()
	if t.lay.words > 0 {
		e := slot[K, V]{key: k, val: v}
		writeSlotLocked(&b.slots[j], &e, t.lay.val, t.lay)
	} else {
		b.slots[j].val = v
	}
	m := &t.meta[i]
	if ttl && m.exp[j].Load() != exp {
		storeRelaxedInt64(&m.exp[j], exp)
	}
	// touch, written out: a hot key's update leaves a fresh policy word
	// alone without a call.
	if old := cb.acc[j].Load(); !fresh(old, now, slack) {
		touchStale(&cb.acc[j], old, now, pol)
	}
}

// slotsOf returns the number of slots in a capacity mask.
func slotsOf(capMask uint64) int { return ctrl(capMask).load() }

// clearSlot empties slot j of bucket i; the caller holds the bucket.
func (t *cacheTable[K, V]) clearSlot(i uint64, j int) {
	cb := t.cbucket(i)
	b := cb.b.ref()
	b.ctrl.Store(uint64(ctrl(b.ctrl.Load()).withSlot(j, emptyUsed)))
	var zero slot[K, V]
	if t.lay.words > 0 {
		storeSlot(&b.slots[j], &zero, 0, t.lay)
	} else {
		b.slots[j] = zero
	}
	cb.acc[j].Store(0)
	t.meta[i].exp[j].Store(0)
	t.release(i, j)
	if t.wrote != nil {
		t.wrote[i].at[j].Store(0)
	}
	t.live.Add(-1)
}

// touch records a hit on slot j of bucket i, whose policy word was old
// when the entry was found. It writes the word only if the hit changes it
// by more than slack ticks or a hit, so that a hot key read from many
// cores does not make them fight over its cache line. It swaps old for
// the new word, so that a hit that raced the entry's removal writes
// nothing: old must have been read with the entry (in lookup's version
// check, or under a lock), for if touch loaded it afresh it could find
// an emptied slot's 0, or the word of a key that replaced the entry, and
// stamp the hit there.
func (t *cacheTable[K, V]) touch(i uint64, j int, old uint32, now uint64, slack uint32, pol *policy) {
	if !fresh(old, now, slack) {
		touchStale(&t.cbucket(i).acc[j], old, now, pol)
	}
}

// touchStale is touch's write, for a policy word m that fresh found stale.
func touchStale(m *atomic.Uint32, old uint32, now uint64, pol *policy) {
	if nw := pol.current().accessed(old, now); nw != old {
		m.CompareAndSwap(old, nw)
	}
}

// entriesOf copies the entries of bucket i into dst, with their expiry in
// exps (Unix nanoseconds by the store's clock, 0 for none; left as it is
// for an unbounded store, whose entries never expire), and returns how
// many it copied: a consistent view of the bucket, taken as Get reads
// (optimistically or under the read lock). Iteration and snapshots read
// the table this way.
func (t *cacheTable[K, V]) entriesOf(i uint64, dst *[slotsPerBucket]slot[K, V], exps *[slotsPerBucket]int64) int {
	if t.meta == nil {
		return t.bucket(i).snapshot(dst, t.lay)
	}
	return t.bucket(i).snapshotExp(dst, &t.meta[i].exp, exps, t.lay)
}
