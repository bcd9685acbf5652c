package store

import (
	"sync/atomic"

	"github.com/twochoice/twochoice/hashfn"
)

// table is a map's table: n buckets with their hash function, candidate
// generator and stash. A map has one table, and two while it grows or
// re-keys (see grow.go and flood.go).
type table[K comparable, V any] struct {
	// The table's hash function of keys. Tables of one map share it
	// until a flood makes the map re-key (flood.go).
	hasher[K]
	geometry

	// The buckets' headers and their slots, in chunks of chunkSize (the
	// last may be shorter), so that a growth can allocate the next table a
	// chunk at a time instead of in one call that stalls its caller
	// (chunk.go). The headers are an array of their own, four to a cache
	// line (see bref).
	hdrs   [][]bucketHdr
	groups [][]group[K, V]
	ready  int // chunks allocated

	// maxEntries and stashBound are the growth thresholds (grow.go).
	maxEntries int64
	stashBound int
	// next is nextSize(n), the size one growth step takes this table to,
	// worked out once: prepare needs it on every insert, and for double
	// hashing a size off the powers of two (MapOptions.Growth other than
	// 2) is a prime search. prepAt is the entry count from which inserts
	// prepare the next table, a chunk each (prepare).
	next   uint64
	prepAt int64

	lay wordLayout // the slots' word layout: how they are read (layout.go)
	// prefetch: lookups and writes prefetch their candidates' slots as
	// they load the headers, as the slots are too many to stay in a
	// core's L2 (bigMapTable).
	prefetch bool

	stash   stash[K, V]
	entries atomic.Int64 // keys in the buckets and the stash
}

// newTable returns a table of n buckets hashing with o's family and seed;
// with alloc false its chunks are not allocated yet (see allocNext).
func newTable[K comparable, V any](o *config, n uint64, lay wordLayout, alloc bool) *table[K, V] {
	fn, err := hashfn.New(o.Hash, o.Seed)
	if err != nil {
		panic("store: " + err.Error()) // the options' resolve and Open check the family
	}
	return newTableFn[K, V](o, n, lay, alloc, hasherOf[K](fn))
}

// newTableFn is newTable with the hash function hs: the one of the table
// it replaces, or a re-key's.
func newTableFn[K comparable, V any](o *config, n uint64, lay wordLayout, alloc bool, hs hasher[K]) *table[K, V] {
	t := &table[K, V]{hasher: hs, geometry: newGeometry(o, n), lay: lay}
	t.maxEntries, t.stashBound = thresholds(o, n)
	t.next = nextSize(o, n)
	t.prefetch = bigMapTable[K, V](n)
	t.prepAt = t.maxEntries - prepWindow(t.next)
	chunks := (n + chunkSize - 1) / chunkSize
	t.hdrs = make([][]bucketHdr, chunks)
	t.groups = make([][]group[K, V], chunks)
	if alloc {
		t.allocRest()
	}
	return t
}

// get looks a key up: each candidate in order, then the stash if the
// first candidate's hint says a stashed key may be there. Map.Get
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
		if v, ok = t.bucket(i).get(k, tag, t.lay); ok {
			return v, true
		}
	}
	if t.stash.len() > 0 && t.bucket(c[0]).sync.hint() != 0 {
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
// and every wrong guess costs a pipeline refill right after the control
// words' loads. The Go compiler will not make that choice a conditional
// move, since the result addresses a load (golang.org/issue/26306), so it
// is written out: sel is all ones when the first candidate has no match,
// and picks the second's words by masking, and its bucket from a
// two-element array. So written, a -short Get (1<<12 keys, all in cache)
// takes 1.89× the time of the RWMutex map rather than 2.04×
// (BenchmarkGetRatio, count 10); reading the slot inline with the branch
// kept saves nothing.
//
// In a table past a core's L2 (bigMapTable), both candidates' slots are
// prefetched before the headers are loaded, so that the slot a tag names
// arrives with its header rather than a miss after it. All six lines, of
// which a hit uses one: fetching fewer measures no faster. Inserts that
// put a key in a slot its hash names when that slot is free, and Gets
// that prefetch only that slot's lines in both candidates, gave 1.47 and
// 1.00 times the RWMutex map's time on 1 and 2 goroutines against 1.45
// and 1.04 (BenchmarkGetRatio, 1M real keys, steady, 3 alternations);
// non-temporal (PREFETCHNTA) and L2 (PREFETCHT1) prefetches, and the
// prefetches issued after the header loads instead of before, were as
// fast or slower. A Get at this size waits on memory as the map's does,
// and the key's own bytes, which the hash reads first, are a third of
// that wait on one goroutine and half on two (CPU profiles of the steady
// runs).
//
// The slot is copied and checked against the sync word as readMatch does.
// A key with no tag match in either candidate and no stash hint on the
// first, most Gets of absent keys, is answered here too, without
// get2Rest's call: an absent-key Get at 4,096 keys then takes 1.681 ± 2%
// of the RWMutex map's time rather than 1.780 ± 2%
// (BenchmarkGetAbsentRatio, 20 runs each; present keys and 1M keys
// unchanged). Anything else (a tag match that did not hold k, a stash
// hint, a writer in the way) goes to get2Rest, which carries on from the
// words loaded here and finds what get2 would without this fast path.
func (t *table[K, V]) get2(k K, h uint64, tag uint8) (v V, ok bool) {
	var c0, c1 uint64
	if t.scheme != hashfn.Double {
		c0, c1 = t.cand2Words(h)
	} else {
		c0, c1 = t.cand2Double(h)
	}
	if t.prefetch {
		prefetchGroup(t.group(c0))
		prefetchGroup(t.group(c1))
	}
	h0, h1 := t.hdr(c0), t.hdr(c1)
	l := t.lay
	if l.words == 0 {
		b0, b1 := t.bucket(c0), t.bucket(c1)
		var f found[V]
		if f, ok = b0.getLocked(k, tag, nil); !ok {
			f, ok = b1.getLocked(k, tag, nil)
		}
		v = f.val
		if !ok && t.stash.len() > 0 && b0.sync.hint() != 0 {
			return t.stash.get(k)
		}
		return v, ok
	}
	s0 := h0.sync.v.Load()
	m0 := ctrl(h0.ctrl.Load()).match(tag)
	s1 := h1.sync.v.Load()
	m1 := ctrl(h1.ctrl.Load()).match(tag)
	// m0 flags only the high bits of bytes, so m0>>1 is below 1<<63 and
	// m0>>1 - 1 is negative just when m0 is 0: the shift spreads its sign.
	sel := uint64(int64(m0>>1-1) >> 63)
	c := c0 ^ (c0^c1)&sel
	hs := [2]*bucketHdr{h0, h1}
	hc := hs[sel&1]
	s := s0 ^ (s0^s1)&sel
	m := m0 ^ (m0^m1)&sel
	if m != 0 && s&writerBit == 0 {
		var e slot[K, V]
		readSlot(&e, &t.group(c)[slotOf(m)], l)
		if hc.sync.v.Load() == s && e.key == k {
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
	return t.get2Rest(k, tag, t.bucket(c0), t.bucket(c1), s0, s1, m0, m1)
}

// get2Rest is get2 past its fast path: the candidates b0 and b1, their
// sync words s0 and s1 and their tag matches m0 and m1, as get2 loaded
// them.
func (t *table[K, V]) get2Rest(k K, tag uint8, b0, b1 bref[K, V], s0, s1, m0, m1 uint64) (v V, ok bool) {
	l := t.lay
	var f found[V]
	if m0 != 0 {
		var valid bool
		if f, ok, valid = b0.readMatch(k, m0, s0, l, nil); !valid {
			f, ok = b0.getOptimistic(k, tag, l, nil)
		}
	}
	if !ok && m1 != 0 {
		var valid bool
		if f, ok, valid = b1.readMatch(k, m1, s1, l, nil); !valid {
			f, ok = b1.getOptimistic(k, tag, l, nil)
		}
	}
	v = f.val
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
	for _, i := range t.cands(h, &c) {
		b := t.bucket(i)
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
	for _, i := range t.cands(h, &c) {
		b := t.bucket(i)
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
	t.place(t.cands(h, &c), k, v, h, tag)
}

// place is insert given the key's candidates cs.
func (t *table[K, V]) place(cs []uint64, k K, v V, h uint64, tag uint8) {
	var loads [hashfn.MaxChoices]uint32
	for j, i := range cs {
		loads[j] = t.load(i)
	}
	b := t.bucket(cs[t.choose(loads[:len(cs)], h)])
	if e := ctrl(b.ctrl.Load()).empty(t.capMask); e != 0 {
		b.put(slotOf(e), k, v, tag, t.lay)
	} else {
		t.stash.put(k, v)
		t.bucket(cs[0]).sync.addHint(+1)
	}
	t.entries.Add(1)
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
// with storeRelease, as put does: a plain store on amd64
// (relaxed_amd64.go), so the slot's write does not wait for its cache
// miss.
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
	// usually on another line, and its write would miss after the
	// control word's. A load of each control word instead would also
	// block the CPU's retirement at every miss, where a prefetch does not
	// (BenchmarkSetGrowingPaired, BenchmarkIntSetGrowingRatio). Builds
	// without a prefetch instruction load the control words.
	for x := range es {
		t.cands(hs[x], &cands[x])
	}
	for x := range es {
		for _, i := range cands[x][:t.d] {
			if havePrefetch {
				prefetchBucket(t.bucket(i))
			} else {
				touch |= t.bucket(i).ctrl.Load()
			}
		}
	}
	keep(touch)
	for x := range es {
		h := hs[x]
		t.place(cands[x][:t.d], es[x].key, es[x].val, h, tagOf(h))
	}
}

// delete removes k if the table holds it and reports whether it did.
func (t *table[K, V]) delete(k K, h uint64, tag uint8) bool {
	var c [hashfn.MaxChoices]uint64
	cs := t.cands(h, &c)
	for _, i := range cs {
		b := t.bucket(i)
		if j := b.find(k, tag); j >= 0 {
			b.remove(j, t.lay)
			t.entries.Add(-1)
			return true
		}
	}
	if t.stash.len() > 0 && t.stash.has(k) {
		t.stash.remove(k)
		t.bucket(cs[0]).sync.addHint(-1)
		t.entries.Add(-1)
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
	for _, i := range t.cands(h, &c) {
		prefetchBucket(t.bucket(i))
	}
}

// load returns the number of keys in bucket i.
func (t *table[K, V]) load(i uint64) uint32 {
	return uint32(ctrl(t.bucket(i).ctrl.Load()).load())
}
