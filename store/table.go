package store

import (
	"sync/atomic"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
)

// table is one array of n buckets with its hash function, candidate
// generator and stash. A store has one table, and two while it grows or
// re-keys (see grow.go and flood.go).
type table[K comparable, V any] struct {
	// The table's hash function of keys. Tables of one store share it
	// until a flood makes the store re-key (flood.go).
	hasher[K]

	// The buckets, in chunks of chunkSize (the last may be shorter), so
	// that a growth can allocate the next table a chunk at a time instead
	// of in one call that stalls its caller (chunk.go).
	chunks  [][]bucketOf[K, V]
	cchunks [][]cacheBucket[K, V] // a cache's buckets instead of chunks
	n       uint64                // buckets
	ready   int                   // chunks allocated
	gen     hashfn.Generator
	rule    bucket.Placement
	d       int
	size    int    // BucketSize: the slots of a bucket in use
	capMask uint64 // the high bits of the first size control bytes

	// maxEntries and stashBound are the growth thresholds (grow.go).
	maxEntries int64
	stashBound int
	// next is nextSize(n), the size one growth step takes this table to,
	// worked out once: prepare needs it on every insert, and for double
	// hashing a size off the powers of two (Options.Growth other than 2)
	// is a prime search.
	next uint64

	// For the two-choice fast path (cand2): the scheme, and the first
	// bucket and size of each part (Parts), or n (Independent, Double).
	scheme hashfn.Scheme
	lo     [2]uint64
	span   [2]uint64
	pow2   bool

	lay wordLayout // the slots' word layout: how they are read (layout.go)

	// prefetch: a Get prefetches every line of both candidates, as the
	// buckets are too many to be in cache (bigTable); in a cache's table,
	// a Get and a Set do (bigCacheTable).
	prefetch bool

	stash   stash[K, V]
	entries int64 // keys in the buckets and the stash; guarded by the store's mutex

	// Cache mode only (cache.go): the slots' expiries, bucket by bucket
	// (their policy words are in cchunks); the buckets below short have
	// one slot fewer than size; live counts the entries (the bucket locks
	// guard the writes, so there is no store-wide count to contend for).
	meta  []bucketMeta
	short uint64
	live  atomic.Int64
}

// newTable returns a table of n buckets hashing with o's family and seed;
// with alloc false its chunks are not allocated yet (see allocNext).
func newTable[K comparable, V any](o *Options, n uint64, lay wordLayout, alloc bool) *table[K, V] {
	fn, err := hashfn.New(o.Hash, o.Seed)
	if err != nil {
		panic("store: " + err.Error()) // resolve and Open check the family
	}
	return newTableFn[K, V](o, n, lay, alloc, hasherOf[K](fn))
}

// newTableFn is newTable with the hash function hs: the one of the table
// it replaces, or a re-key's.
func newTableFn[K comparable, V any](o *Options, n uint64, lay wordLayout, alloc bool, hs hasher[K]) *table[K, V] {
	gen, err := o.Placement.Generator(n, o.Choices)
	if err != nil {
		// Sizes come from sizeAtLeast, which only returns sizes the
		// rule accepts: reaching this is a bug in this package.
		panic("store: " + err.Error())
	}
	t := &table[K, V]{hasher: hs}
	t.setup(o, gen)
	t.lay = lay
	t.chunks = make([][]bucketOf[K, V], (n+chunkSize-1)/chunkSize)
	if alloc {
		t.allocRest()
	}
	return t
}

// setup fills in everything but the buckets.
func (t *table[K, V]) setup(o *Options, gen hashfn.Generator) {
	n := gen.Buckets()
	t.n = n
	t.gen = gen
	t.rule = o.Placement
	t.d = o.Choices
	t.size = o.BucketSize
	t.capMask = capMaskOf(o.BucketSize)
	t.maxEntries, t.stashBound = thresholds(o, n)
	t.next = nextSize(o, n)
	t.scheme = gen.Scheme()
	t.span = [2]uint64{n, n}
	t.pow2 = n&(n-1) == 0
	t.prefetch = bigTable[K, V](n)
	if t.scheme == hashfn.Parts && t.d == 2 {
		for k := range 2 {
			lo, hi := gen.PartBounds(k)
			t.lo[k], t.span[k] = lo, hi-lo
		}
	}
}

// cand2 returns the two candidates of hash h, as gen.Fill would (a test
// checks it), without Fill's loop and switch: the fast path for d = 2.
func (t *table[K, V]) cand2(h uint64) (uint64, uint64) {
	if t.scheme == hashfn.Double {
		return t.cand2Double(h)
	}
	return t.cand2Words(h)
}

// cand2Words is cand2 for the Independent and Parts schemes: each word of
// h reduced into its part (hashfn.Reduce, written out so that the function
// stays within the inlining budget). get2 calls it directly, so that a Get
// pays no call for its candidates.
func (t *table[K, V]) cand2Words(h uint64) (uint64, uint64) {
	return t.lo[0] + uint64(uint32(h))*t.span[0]>>32, t.lo[1] + (h>>32)*t.span[1]>>32
}

// cand2Double is cand2 for the Double scheme: f + k·g mod n.
func (t *table[K, V]) cand2Double(h uint64) (uint64, uint64) {
	w0, w1 := uint32(h), uint32(h>>32)
	n := t.span[0]
	c := hashfn.Reduce(w0, n)
	var step uint64
	if t.pow2 {
		step = 2*hashfn.Reduce(w1, n/2) + 1
	} else {
		step = 1 + hashfn.Reduce(w1, n-1)
	}
	c1 := c + step
	if c1 >= n {
		c1 -= n
	}
	return c, c1
}

// candidates fills c with the key's candidates and returns them.
func (t *table[K, V]) candidates(h uint64, c *[hashfn.MaxChoices]uint64) []uint64 {
	t.gen.Fill(h, c[:])
	return c[:t.d]
}

// get looks a key up: each candidate in order, then the stash if the
// first candidate's hint says a stashed key may be there. Store.Get
// makes its two cases' calls itself (get does not fit the inlining budget
// in shaped generic code), so that a Get pays one call less.
func (t *table[K, V]) get(k K, h uint64, tag uint8) (v V, ok bool) {
	if t.d == 2 {
		return t.get2(k, h, tag)
	}
	return t.getD(k, h, tag)
}

// getD is get for any number of candidates.
func (t *table[K, V]) getD(k K, h uint64, tag uint8) (v V, ok bool) {
	var c [hashfn.MaxChoices]uint64
	for _, i := range t.candidates(h, &c) {
		if v, ok = t.mbucket(i).get(k, tag, t.lay); ok {
			return v, true
		}
	}
	if t.stash.len() > 0 && t.mbucket(c[0]).sync.hint() != 0 {
		return t.stash.get(k)
	}
	return v, false
}

// get2 is get for two candidates. It loads both buckets' sync and control
// words before looking at either, so that when the key is in the second
// candidate its cache miss overlaps the first one's instead of following
// it. A candidate whose tags do not match needs no check of its version: a
// key present all along is in one slot all along, and its tag always
// matches.
//
// The common case, a key in the first slot its tag flags in the first
// candidate with a match, is read here (get2Rest has every other case),
// without a branch on which candidate that is: whether a key sits in its
// first or its second candidate is a coin toss to the branch predictor,
// and every wrong guess cost a pipeline refill right after the control
// words' loads. The Go compiler will not make that choice a conditional
// move, since the result addresses a load (golang.org/issue/26306), so it
// is written out: sel is all ones when the first candidate has no match,
// and picks the second's words by masking, and its bucket from a
// two-element array. That took a -short Get (1<<12 keys, all in cache)
// from 2.04× the time of the RWMutex map to 1.89× (BenchmarkGetRatio,
// count 10); reading the slot inline with the branch kept took none off.
//
// The slot is copied and checked against the sync word as readMatch does.
// A key with no tag match in either candidate and no stash hint on the
// first, most Gets of absent keys, is answered here too, without
// get2Rest's call: that took an absent-key Get at 4,096 keys from 1.780 ±
// 2% to 1.681 ± 2% the RWMutex map's time (BenchmarkGetAbsentRatio, 20
// runs each; present keys and 1M keys unchanged). Anything else (a tag
// match that did not hold k, a stash hint, a writer in the way) goes to
// get2Rest, which carries on from the words loaded here and finds what
// get2 found before this fast path.
func (t *table[K, V]) get2(k K, h uint64, tag uint8) (v V, ok bool) {
	var c0, c1 uint64
	if t.scheme != hashfn.Double {
		c0, c1 = t.cand2Words(h)
	} else {
		c0, c1 = t.cand2Double(h)
	}
	b0, b1 := t.mbucket(c0), t.mbucket(c1)
	if t.prefetch {
		prefetchBucket(b0)
		prefetchBucket(b1)
	}
	l := t.lay
	if l.words == 0 {
		if v, ok = b0.getLocked(k, tag); !ok {
			v, ok = b1.getLocked(k, tag)
		}
		if !ok && t.stash.len() > 0 && b0.sync.hint() != 0 {
			return t.stash.get(k)
		}
		return v, ok
	}
	s0 := b0.sync.v.Load()
	m0 := ctrl(b0.ctrl.Load()).match(tag)
	s1 := b1.sync.v.Load()
	m1 := ctrl(b1.ctrl.Load()).match(tag)
	// m0 flags only the high bits of bytes, so m0>>1 is below 1<<63 and
	// m0>>1 - 1 is negative just when m0 is 0: the shift spreads its sign.
	sel := uint64(int64(m0>>1-1) >> 63)
	bs := [2]*bucketOf[K, V]{b0, b1}
	b := bs[sel&1]
	s := s0 ^ (s0^s1)&sel
	m := m0 ^ (m0^m1)&sel
	if m != 0 && s&writerBit == 0 {
		var e slot[K, V]
		loadSlot(&e, &b.slots[slotOf(m)], l)
		if b.sync.v.Load() == s && e.key == k {
			return e.val, true
		}
	}
	// m is 0 only when neither candidate has a tag match, the common case
	// of an absent key. Then only the stash can hold k, and only if the
	// first candidate's hint (in s0, loaded above) says a stashed key may
	// be there; a key stashed all along keeps the hint up all along.
	if m == 0 && hintOf(s0) == 0 {
		return v, false
	}
	return t.get2Rest(k, tag, b0, b1, s0, s1, m0, m1)
}

// get2Rest is get2 past its fast path: the candidates b0 and b1, their
// sync words s0 and s1 and their tag matches m0 and m1, as get2 loaded
// them.
func (t *table[K, V]) get2Rest(k K, tag uint8, b0, b1 *bucketOf[K, V], s0, s1, m0, m1 uint64) (v V, ok bool) {
	l := t.lay
	if m0 != 0 {
		var valid bool
		if v, ok, valid = b0.readMatch(k, m0, s0, l); !valid {
			v, ok = b0.getOptimistic(k, tag, l)
		}
	}
	if !ok && m1 != 0 {
		var valid bool
		if v, ok, valid = b1.readMatch(k, m1, s1, l); !valid {
			v, ok = b1.getOptimistic(k, tag, l)
		}
	}
	if !ok && t.stash.len() > 0 && b0.sync.hint() != 0 {
		return t.stash.get(k)
	}
	return v, ok
}

// Writers' operations. The store's mutex serializes them, so they read
// slots and the stash without locks; they take a bucket's exclusive lock
// only to change it.

// set updates k if the table holds it and reports whether it did.
func (t *table[K, V]) set(k K, v V, h uint64, tag uint8) bool {
	var c [hashfn.MaxChoices]uint64
	for _, i := range t.candidates(h, &c) {
		b := t.mbucket(i)
		if j := b.find(k, tag); j >= 0 {
			b.update(j, v, t.lay)
			return true
		}
	}
	if t.stash.len() > 0 && t.stash.has(k) {
		t.stash.put(k, v)
		return true
	}
	return false
}

// getLocked returns k's value, for a caller that holds the store's
// writers' mutex (so that no slot changes under it).
func (t *table[K, V]) getLocked(k K, h uint64, tag uint8) (V, bool) {
	var c [hashfn.MaxChoices]uint64
	for _, i := range t.candidates(h, &c) {
		b := t.mbucket(i)
		if j := b.find(k, tag); j >= 0 {
			return b.slots[j].val, true
		}
	}
	if t.stash.len() > 0 {
		return t.stash.get(k)
	}
	var zero V
	return zero, false
}

// insert places a key the table does not hold: in the candidate the rule
// picks, or in the stash when every candidate is full.
func (t *table[K, V]) insert(k K, v V, h uint64, tag uint8) {
	var c [hashfn.MaxChoices]uint64
	t.place(t.candidates(h, &c), k, v, h, tag)
}

// place is insert given the key's candidates cs.
func (t *table[K, V]) place(cs []uint64, k K, v V, h uint64, tag uint8) {
	b := t.mbucket(cs[t.choose(cs, h)])
	if e := ctrl(b.ctrl.Load()).empty(t.capMask); e != 0 {
		b.put(slotOf(e), k, v, tag, t.lay)
	} else {
		t.stash.put(k, v)
		t.mbucket(cs[0]).sync.addHint(+1)
	}
	t.entries++
}

// choose returns the index in cs of the candidate the rule picks, given
// the candidates' control words.
func (t *table[K, V]) choose(cs []uint64, h uint64) int {
	var loads [hashfn.MaxChoices]uint32
	for j, i := range cs {
		loads[j] = t.load(i)
	}
	switch t.d {
	case 1:
		return 0
	case 2:
		// Choose2 reads the coin's top bit: bit 7 of the hash, beside
		// the tag's bits 0–6, so placement follows from the seed.
		return t.rule.Choose2(loads[0], loads[1], h<<56)
	}
	// Choose reads 32 coin bits: they come from an extension word of the
	// hash that no candidate uses (candidates use words 1 to 3).
	return t.rule.Choose(loads[:t.d], hashfn.Extend(h, coinExtension))
}

// keep uses a value, so that the compiler keeps the loads that made it:
// the loads that fetch cache lines ahead of their use (insertBatch,
// mover.flush, setCache, the restorer) are otherwise dead.
//
//go:noinline
func keep(uint64) {}

// insertBatch inserts up to moveBatch keys the table does not hold, with
// their hashes, as insert would one after the other, after prefetching
// all their candidates, so that those cache misses overlap. A growth moves
// keys with it.
//
// Each key's control word is published right after its slot is written,
// with storeRelease, as put does. insertBatch used to keep the new control
// words in a list and publish them all at the end, from when publishing
// was an atomic exchange, a full barrier on amd64 that would have made
// each slot write wait for its cache miss; since storeRelease is a plain
// store there (relaxed_amd64.go), the list only cost a scan of up to 32
// entries for each candidate a key looked at, and an interface call.
func (t *table[K, V]) insertBatch(es []slot[K, V], hs []uint64) {
	var (
		cands [moveBatch][hashfn.MaxChoices]uint64
		touch uint64
	)
	// First every key's candidates, then a prefetch of every line of
	// every candidate: the misses do not depend on one another, so they
	// overlap. The prefetches get a loop of their own, so that the
	// computation of the candidates does not hold them back. Whole
	// buckets, not only their control words: the slot a key goes to is
	// usually on another line, and its write missed after the control
	// word's. Loading each control word instead (as until stop 24) also
	// blocked the CPU's retirement at every miss, where a prefetch does
	// not. Prefetching whole buckets took a growing fill of 2M string
	// keys from 2.340 to 2.234 times the map's time (p = 0.015) and one
	// of 2^20 uint64 keys from 525.9 to 467.5 ns a key (geomean of both
	// hash families, p <= 0.026; BenchmarkSetGrowingPaired and
	// BenchmarkIntSetGrowingRatio, 6 alternations each). Builds without
	// a prefetch instruction load the control words, as before.
	for x := range es {
		t.candidates(hs[x], &cands[x])
	}
	for x := range es {
		for _, i := range cands[x][:t.d] {
			if havePrefetch {
				prefetchBucket(t.mbucket(i))
			} else {
				touch |= t.mbucket(i).ctrl.Load()
			}
		}
	}
	keep(touch)
	for x := range es {
		h := hs[x]
		t.place(cands[x][:t.d], es[x].key, es[x].val, h, tagOf(h))
	}
}

// coinExtension is the Extend word whose top half breaks ties among more
// than two candidates; candidates 2 to 7 use extension words 1 to 3.
const coinExtension = hashfn.MaxChoices/2 + 1

// delete removes k if the table holds it and reports whether it did.
func (t *table[K, V]) delete(k K, h uint64, tag uint8) bool {
	var c [hashfn.MaxChoices]uint64
	cs := t.candidates(h, &c)
	for _, i := range cs {
		b := t.mbucket(i)
		if j := b.find(k, tag); j >= 0 {
			b.remove(j, t.lay)
			t.entries--
			return true
		}
	}
	if t.stash.len() > 0 && t.stash.has(k) {
		t.stash.remove(k)
		t.mbucket(cs[0]).sync.addHint(-1)
		t.entries--
		return true
	}
	return false
}

// prefetchCandidates prefetches every cache line of hash h's candidates.
// A Set of a new key reads the candidates' control words and then writes a
// slot, usually on another line of the bucket; and the store buffer must
// drain that write at the next locked instruction (the count's add, the
// mutex's unlock), so the write's miss followed the control word's.
// Fetching all the lines at once makes it one wait instead of two.
func (t *table[K, V]) prefetchCandidates(h uint64) {
	var c [hashfn.MaxChoices]uint64
	for _, i := range t.candidates(h, &c) {
		prefetchBucket(t.mbucket(i))
	}
}

// load returns the number of keys in bucket i.
func (t *table[K, V]) load(i uint64) uint32 {
	return uint32(ctrl(t.bucket(i).ctrl.Load()).load())
}
