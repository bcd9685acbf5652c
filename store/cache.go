package store

import (
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/twochoice/twochoice/hashfn"
)

// Cache mode: a store with Options.MaxEntries > 0.
//
// The table never grows. It has exactly MaxEntries slots: n buckets of
// BucketSize slots, n the smallest size the rule accepts that is at least
// MaxEntries / BucketSize, and the first short buckets one slot fewer (and
// all of them fewer still if the rule rounded n up a lot), so that Len
// can never pass MaxEntries and no store-wide count has to be consulted to
// know it. A new key goes to its least loaded candidate, by the rule, as
// in an unbounded store; when every candidate is full it takes the slot of
// a victim among the candidates' entries (evict.go). There is no stash.
//
// Writers lock only the candidate buckets of their key (in increasing
// order, so two writers never wait for each other in a cycle) and hold
// them for the whole Set or Delete: there is no store-wide writers' lock,
// which is what lets writes on different keys run in parallel. Readers
// read as in an unbounded store, plus the slot's expiry, validated by the
// same version check, and then record the hit in the slot's policy word.

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
func cacheSize(o *Options) (n uint64, size int, short uint64, err error) {
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
// store of options o: loads 0 to the most slots a bucket has (table.size).
// That is BucketSize, except in a cache that cacheSize gave fewer, larger
// buckets.
func histogramLoads(o *Options) int {
	if o.MaxEntries > 0 {
		if _, size, _, err := cacheSize(o); err == nil {
			return size + 1
		}
	}
	return o.BucketSize + 1
}

// newCacheTable returns the table of a cache, allocated.
func newCacheTable[K comparable, V any](o *Options, lay wordLayout) *table[K, V] {
	n, size, short, err := cacheSize(o)
	if err != nil {
		panic("store: " + err.Error()) // New checked it
	}
	t := newTable[K, V](o, n, lay, false)
	t.chunks = nil
	t.cchunks = make([][]cacheBucket[K, V], (n+chunkSize-1)/chunkSize)
	for c := range t.cchunks {
		t.cchunks[c] = make([]cacheBucket[K, V], min(chunkSize, n-uint64(c)*chunkSize))
	}
	t.size = size
	t.capMask = capMaskOf(size)
	t.short = short
	t.maxEntries = int64(o.MaxEntries)
	t.meta = make([]bucketMeta, n)
	t.prefetch = bigCacheTable[K, V](n)
	return t
}

// capAt returns the mask of the slots bucket i may use.
func (t *table[K, V]) capAt(i uint64) uint64 {
	if i < t.short {
		return capMaskOf(t.size - 1)
	}
	return t.capMask
}

// cands returns the key's candidates, through the d = 2 fast path when it
// applies.
func (t *table[K, V]) cands(h uint64, c *[hashfn.MaxChoices]uint64) []uint64 {
	if t.d == 2 {
		c[0], c[1] = t.cand2(h)
		return c[:2]
	}
	return t.candidates(h, c)
}

// lookup finds k in bucket i and returns its slot, value, expiry and
// policy word: optimistically for the layouts that allow it (the expiry
// and the policy word are read inside the same version check as the
// slot), else under the read lock. It reads the expiry only if ttl says
// some entry may have one.
func (t *table[K, V]) lookup(i uint64, k K, tag uint8, ttl bool) (j int, v V, exp int64, acc uint32, ok bool) {
	cb := t.cbucket(i)
	b, ma := &cb.b, &cb.acc
	me := &t.meta[i].exp
	l := t.lay
	if l.words == 0 {
		if ctrl(b.ctrl.Load()).match(tag) == 0 {
			return -1, v, 0, 0, false
		}
		b.sync.rlock()
		for m := ctrl(b.ctrl.Load()).match(tag); m != 0; m &= m - 1 {
			if x := slotOf(m); b.slots[x].key == k {
				j, v, exp, acc, ok = x, b.slots[x].val, me[x].Load(), ma[x].Load(), true
				break
			}
		}
		b.sync.runlock()
		return j, v, exp, acc, ok
	}
	for {
		s := b.sync.begin()
		m := ctrl(b.ctrl.Load()).match(tag)
		valid := true
		for ; m != 0; m &= m - 1 {
			x := slotOf(m)
			var e slot[K, V]
			loadSlot(&e, &b.slots[x], l)
			var xp int64
			if ttl {
				xp = me[x].Load()
			}
			a := ma[x].Load()
			if b.sync.v.Load() != s {
				valid = false
				break
			}
			if e.key == k {
				return x, e.val, xp, a, true
			}
		}
		if valid {
			return -1, v, 0, 0, false
		}
	}
}

// getCache is Get in cache mode. The TTL flag is read before the slots:
// an entry written with an expiry after that is one this Get may return
// anyway (it raced the Set), and it had not expired when it was written.
func (s *Store[K, V]) getCache(t *table[K, V], k K, h uint64, tag uint8, hint uint64) (V, bool) {
	var (
		c       [hashfn.MaxChoices]uint64
		matches [hashfn.MaxChoices]bool
	)
	ttl := s.ttl.Load()
	cs := t.cands(h, &c)
	if (h>>shadowBit)&s.shMask == 0 {
		s.sh.get(h)
	}
	// Check every candidate's tags before reading any slot, so that the
	// candidates' cache misses overlap (as get2 does for a map). A
	// candidate without a matching tag needs no further look: a key
	// present all along keeps its slot and its tag. In a table past a
	// core's L2, prefetch every line of each candidate with its control
	// word, as setCache does, so that a hit's slot is not a second miss
	// after its header's (BenchmarkCacheGetRatio at 1/10, 10
	// alternations: x-otter 0.756 -> 0.681 on 2 goroutines, 0.745 ->
	// 0.650 on 1; p < 0.001).
	for x, i := range cs {
		cb := t.cbucket(i)
		if t.prefetch {
			prefetchCacheBucket(cb)
		}
		matches[x] = ctrl(cb.b.ctrl.Load()).match(tag) != 0
	}
	for x, i := range cs {
		if !matches[x] {
			continue
		}
		j, v, exp, acc, ok := t.lookup(i, k, tag, ttl)
		if !ok {
			continue
		}
		if exp != 0 && exp <= s.nowNanos() {
			s.expire(t, i, k, tag)
			break
		}
		t.touch(i, j, acc, s.tickNow(hint), s.slack, &s.pol)
		s.tot.hit(hint)
		return v, true
	}
	s.tot.miss(hint)
	var zero V
	return zero, false
}

// expire removes k from bucket i if it is there and expired: a Get that
// finds an expired entry removes it, so Len stops counting it.
func (s *Store[K, V]) expire(t *table[K, V], i uint64, k K, tag uint8) {
	b := &t.cbucket(i).b
	b.sync.lock()
	if j := b.find(k, tag); j >= 0 {
		if x := t.meta[i].exp[j].Load(); x != 0 && x <= s.nowNanos() {
			one := [1]uint64{i}
			s.cowTouchLocked(t, one[:])
			t.clearSlot(i, j)
			s.tot.stripe(stripeHint()).expirations.Add(1)
		}
	}
	b.sync.unlock()
}

// locked is the set of buckets a cache writer holds: a key's distinct
// candidates, in increasing order.
type locked struct {
	idx [hashfn.MaxChoices]uint64
	n   int
}

// lockAll takes the distinct buckets of cs exclusively, in increasing
// order.
func lockAll[K comparable, V any](lk *locked, t *table[K, V], cs []uint64) {
	lk.n = copy(lk.idx[:], cs)
	if lk.n == 2 {
		if lk.idx[0] > lk.idx[1] {
			lk.idx[0], lk.idx[1] = lk.idx[1], lk.idx[0]
		} else if lk.idx[0] == lk.idx[1] {
			lk.n = 1
		}
	} else if lk.n > 2 {
		slices.Sort(lk.idx[:lk.n])
		lk.n = len(slices.Compact(lk.idx[:lk.n]))
	}
	for _, i := range lk.idx[:lk.n] {
		t.cbucket(i).b.sync.lock()
	}
}

// unlockAll releases what lockAll took.
func unlockAll[K comparable, V any](lk *locked, t *table[K, V]) {
	for _, i := range lk.idx[:lk.n] {
		t.unlockBucket(i)
	}
}

// unlockBucket releases a cache writer's hold on bucket i: without a
// read-modify-write when the slot type is read optimistically, since then
// no reader writes the sync word (syncWord.unlockAlone).
func (t *table[K, V]) unlockBucket(i uint64) {
	if t.lay.words > 0 {
		t.cbucket(i).b.sync.unlockAlone()
	} else {
		t.cbucket(i).b.sync.unlock()
	}
}

// setCache is Set and SetWithTTL in cache mode; exp is the expiry (0:
// never).
//
// With ifAbsent (GetOrSet) a live entry of k is left as it is: setCache
// counts a hit, touches the entry as a Get would, and returns its value
// and true. Otherwise it returns v and false.
func (s *Store[K, V]) setCache(k K, v V, h uint64, tag uint8, exp int64, ifAbsent bool) (V, bool) {
	hint := stripeHint()
	st := s.tot.stripe(hint)
	if exp != 0 && !s.ttl.Load() {
		s.ttl.Store(true)
	}
	t := s.tabs.Load().cur
	var (
		c  [hashfn.MaxChoices]uint64
		cs []uint64
	)
	// The d = 2 candidates of the word schemes written out, as in get2,
	// which spares every Set the calls of cands and cand2 (about 1% of
	// its samples at 1/10).
	if t.d == 2 && t.scheme != hashfn.Double {
		c[0], c[1] = t.cand2Words(h)
		cs = c[:2]
	} else {
		cs = t.cands(h, &c)
	}
	gw, _ := s.gh.spot(h)
	// Load, before the first locked instruction (which waits for every
	// load before it), a word of each cache line a Set needs first: the
	// candidates' headers, their policy words and their control words
	// (cacheBucket), which are one line when the bucket starts in the
	// first 16 bytes of a line and two otherwise, so the first policy
	// word and the control word between them load both. The loads do not
	// depend on one another, so their cache misses overlap instead of
	// following one another. The key's ghost word, which only a new key
	// needs, is prefetched instead: an update (most Sets of a Zipf
	// workload) would otherwise wait for it at its lock. In a table past
	// a core's L2 (bigCacheTable) every line of both candidates is
	// prefetched too, so that the slot an update finds or an insert fills
	// comes with the header instead of a miss after it. All eight cache
	// benchmark cases, 10 alternations: the 1/10 Set's x-otter 0.507 ->
	// 0.469 on 2 goroutines (p = 0.009), 0.562 -> 0.503 on 1.
	prefetchWord(gw)
	var touched uint64
	for _, i := range cs {
		cb := t.cbucket(i)
		if t.prefetch {
			prefetchCacheBucket(cb)
		}
		touched ^= cb.b.ctrl.Load() ^ uint64(cb.acc[0].Load())
	}
	keep(touched)
	// An update locks only the bucket that holds the key: found without
	// a lock first, then found again under the lock (a key only enters a
	// bucket under the locks of all its candidates, so while this one is
	// held, k cannot appear elsewhere). Half the locking of an insert, and
	// a hot key's updates leave its other candidate alone.
	for x, i := range cs {
		b := &t.cbucket(i).b
		m := ctrl(b.ctrl.Load()).match(tag)
		if m == 0 {
			continue
		}
		// Start the matched slot's line on its way now: the lock below
		// waits for every earlier load (the other candidate's words
		// included), and find then waited for this line after it, a
		// second miss in a row (15% of setCache's samples at 1/10).
		// BenchmarkCacheSetRatio, 20 alternations on 2 goroutines:
		// x-otter 0.544 -> 0.528 at 1/10 (p = 0.013), 1/100 unchanged.
		prefetchSlot(&b.slots[slotOf(m)])
		b.sync.lock()
		if j := b.find(k, tag); j >= 0 {
			if ifAbsent {
				if old, ok := s.liveLocked(t, i, j, hint); ok {
					t.unlockBucket(i)
					return old, true
				}
			}
			s.cowTouchLocked(t, cs[x:x+1])
			t.update(i, j, k, v, exp, s.ttl.Load(), s.tickNow(hint), s.slack, &s.pol)
			t.unlockBucket(i)
			st.updates.Add(1)
			return v, false
		}
		t.unlockBucket(i)
	}
	// A new key, most likely: the ghost says what it knew of it, if it
	// was evicted before. Asked before taking the locks, to hold them for
	// less time (if k came in meanwhile, the ghost word is lost, which
	// costs the key its history, not its entry).
	ggap, gage, known := s.gh.take(h, s.tickNow(hint))
	var lk locked
	lockAll(&lk, t, cs)
	s.cowTouchLocked(t, lk.idx[:lk.n])
	now := s.tickNow(hint)
	m4, shift := choiceOf(s.pol.choice())
	// Loaded under the locks: if no entry ever had an expiry when they
	// were taken, every expiry word of these buckets is 0 (a writer that
	// stores one sets ttl first and releases its locks after), and this
	// Set need not read or write them, a cache line saved.
	ttl := s.ttl.Load()
	// Look again: k may have come in since. Then the Set, ticked as an
	// insert, evicted nothing: counted as a fill for Stats.
	for _, i := range cs {
		if j := t.cbucket(i).b.find(k, tag); j >= 0 {
			st.fills.Add(1)
			s.ticks.tick(hint)
			if ifAbsent {
				if old, ok := s.liveLocked(t, i, j, hint); ok {
					unlockAll(&lk, t)
					return old, true
				}
			}
			t.update(i, j, k, v, exp, ttl, now, s.slack, &s.pol)
			unlockAll(&lk, t)
			return v, false
		}
	}
	var loads [hashfn.MaxChoices]uint32
	for x, i := range cs {
		// A short bucket counts its missing slot as full.
		loads[x] = uint32(ctrl(t.cbucket(i).b.ctrl.Load()).load() + t.size - slotsOf(t.capAt(i)))
	}
	var x int
	switch t.d {
	case 1:
	case 2:
		x = t.rule.Choose2(loads[0], loads[1], h<<56)
	default:
		x = t.rule.Choose(loads[:t.d], hashfn.Extend(h, coinExtension))
	}
	i := cs[x]
	cb := t.cbucket(i)
	b := &cb.b
	cw := ctrl(b.ctrl.Load())
	j := -1
	var (
		victimAcc uint32
		victimKey K
		evicted   bool
	)
	if e := cw.empty(t.capAt(i)); e != 0 {
		// The rule picks a least loaded candidate (one choice: the only
		// one), so if it is full, they all are.
		j = slotOf(e)
		t.live.Add(1)
		st.fills.Add(1)
	} else {
		var expired bool
		i, j, expired = s.victim(t, cs, now, m4)
		cb = t.cbucket(i)
		b = &cb.b
		cw = ctrl(b.ctrl.Load())
		// An eviction is counted by the tick below (counters.go).
		if expired {
			st.expiredVictims.Add(1)
		} else {
			evicted = true
			victimAcc = cb.acc[j].Load()
			victimKey = b.slots[j].key
			// The victim's key is hashed again for the ghost after
			// the locks go; a string key's bytes are usually not in
			// the cache, so start loading them now, to arrive while
			// the slot is written.
			prefetchKey(&victimKey, s.strKeys)
		}
	}
	// The tick counts the insert for the eviction clock and for Stats
	// (Sets, Evictions; counters.go): the one atomic add of an insert's
	// bookkeeping. It follows the fill or expired-victim count, so that
	// Stats, which reads the ticks before those counts, never sees an
	// insert ticked whose fill it has not counted (an eviction that is
	// not one: counters.sumCache). It precedes the slot's stores, so that
	// no locked instruction follows them in this Set: one would wait for
	// them (the victim's slot, a cache miss) to reach the cache, which the
	// unlock itself does not (relaxed_amd64.go).
	s.ticks.tick(hint)
	// Plain stores where the build allows (relaxed_amd64.go): the bucket
	// is ours, and the unlock publishes them.
	e := slot[K, V]{key: k, val: v}
	if t.lay.words > 0 && cw.at(j) != emptyFresh {
		writeSlotLocked(&b.slots[j], &e, 0, t.lay)
	} else {
		b.slots[j] = e
	}
	m := &t.meta[i]
	if ttl {
		storeRelaxedInt64(&m.exp[j], exp)
	}
	storeRelaxed32(&cb.acc[j], newcomer(ggap, gage, known, now, shift, s.newGap))
	storeRelaxed(&b.ctrl, uint64(cw.withSlot(j, tag)))
	unlockAll(&lk, t)
	// Leave the victim's policy word in the ghost, for when its key
	// returns, after the locks are released (the key was copied while the
	// slot was ours; keys are values, so reading it now is safe). Its hash
	// is worked out again: a slot keeps no hash, and one eviction's hash
	// costs less than writing a hash beside every insert.
	if evicted {
		s.gh.put(t.hash(victimKey), victimAcc, now)
	}
	return v, false
}

// liveLocked is GetOrSet's look at k's entry, in slot j of bucket i, which
// the caller has locked: unless the entry has expired, it counts a hit,
// touches the entry as a Get would, and returns its value and true.
func (s *Store[K, V]) liveLocked(t *table[K, V], i uint64, j int, hint uint64) (V, bool) {
	m := &t.meta[i]
	if s.ttl.Load() {
		if exp := m.exp[j].Load(); exp != 0 && exp <= s.nowNanos() {
			var zero V
			return zero, false
		}
	}
	t.touch(i, j, t.cbucket(i).acc[j].Load(), s.tickNow(hint), s.slack, &s.pol)
	s.tot.hit(hint)
	return t.cbucket(i).b.slots[j].val, true
}

// update replaces the value in slot j of bucket i, which holds k; the
// caller holds the bucket. It counts as an access. ttl is the store's ttl
// flag, loaded after taking the bucket: while it is false, every expiry
// word of the bucket is 0 and stays so.
func (t *table[K, V]) update(i uint64, j int, k K, v V, exp int64, ttl bool, now uint64, slack uint32, pol *policy) {
	cb := t.cbucket(i)
	b := &cb.b
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

// deleteCache is Delete in cache mode.
func (s *Store[K, V]) deleteCache(k K, h uint64, tag uint8) bool {
	t := s.tabs.Load().cur
	var (
		c  [hashfn.MaxChoices]uint64
		lk locked
	)
	cs := t.cands(h, &c)
	lockAll(&lk, t, cs)
	defer unlockAll(&lk, t)
	s.cowTouchLocked(t, lk.idx[:lk.n])
	for _, i := range cs {
		if j := t.cbucket(i).b.find(k, tag); j >= 0 {
			// An expired entry goes too, but was not there to delete.
			st := s.tot.stripe(stripeHint())
			if x := t.meta[i].exp[j].Load(); x != 0 && x <= s.nowNanos() {
				t.clearSlot(i, j)
				st.expirations.Add(1)
				return false
			}
			t.clearSlot(i, j)
			st.deletes.Add(1)
			return true
		}
	}
	return false
}

// clearSlot empties slot j of bucket i; the caller holds the bucket.
func (t *table[K, V]) clearSlot(i uint64, j int) {
	cb := t.cbucket(i)
	b := &cb.b
	b.ctrl.Store(uint64(ctrl(b.ctrl.Load()).withSlot(j, emptyUsed)))
	var zero slot[K, V]
	if t.lay.words > 0 {
		storeSlot(&b.slots[j], &zero, 0, t.lay)
	} else {
		b.slots[j] = zero
	}
	cb.acc[j].Store(0)
	t.meta[i].exp[j].Store(0)
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
func (t *table[K, V]) touch(i uint64, j int, old uint32, now uint64, slack uint32, pol *policy) {
	if !fresh(old, now, slack) {
		touchStale(&t.cbucket(i).acc[j], old, now, pol)
	}
}

// touchStale is touch's write, for a policy word m that fresh found stale.
func touchStale(m *atomic.Uint32, old uint32, now uint64, pol *policy) {
	_, shift := choiceOf(pol.choice())
	if nw := accessed(old, now, shift); nw != old {
		m.CompareAndSwap(old, nw)
	}
}

// SetWithTTL stores v for k, replacing any value k had, to expire after
// ttl (by Options.Clock); ttl ≤ 0 means it never expires, whatever
// Options.DefaultTTL says. An expired entry is never returned. It is
// counted by Len until it is removed, which happens at the first of: a
// Get of its key, a Set or Delete of its key, or a Set of another key that
// needs room among its candidate buckets (expired entries are the first
// victims there). It needs a bounded store (MaxEntries > 0) and panics
// with ErrUnbounded on an unbounded one.
func (s *Store[K, V]) SetWithTTL(k K, v V, ttl time.Duration) {
	if s.opts.MaxEntries == 0 {
		panic(ErrUnbounded)
	}
	var exp int64
	if ttl > 0 {
		exp = expiryAt(s.nowNanos(), ttl)
	}
	h := s.hash(k)
	s.setCache(k, v, h, tagOf(h), exp, false)
}

// entriesOf copies the entries of bucket i into dst, with their expiry in
// exps (Unix nanoseconds by the store's clock, 0 for none; left as it is
// for an unbounded store, whose entries never expire), and returns how
// many it copied: a consistent view of the bucket, taken as Get reads
// (optimistically or under the read lock). Iteration and snapshots read
// the table this way.
func (t *table[K, V]) entriesOf(i uint64, dst *[slotsPerBucket]slot[K, V], exps *[slotsPerBucket]int64) int {
	if t.meta == nil {
		return t.mbucket(i).snapshot(dst, t.lay)
	}
	return t.cbucket(i).b.snapshotExp(dst, &t.meta[i].exp, exps, t.lay)
}
