package store

import "github.com/twochoice/twochoice/hashfn"

// setCache is Set and SetWithTTL in cache mode; exp is the expiry (0:
// never).
//
// With cf (Compute, GetOrSet; nil for Set) the new value is cf's: see
// computeOf. Otherwise setCache returns v and false.
//
// rv is nil but in a cache bounded by weight, where it is the writer's
// reservation (weight.go): the entry setCache stores takes it, and what it
// does not use setCache gives back. A Compute's value, weighed under the
// locks, may need more than rv holds: then setCache changes nothing and
// returns with rv.need set, for the caller to reserve it and call again.
func (s *Cache[K, V]) setCache(k K, v V, h uint64, tag uint8, exp int64, cf *computeOf[V], rv *reservation[V]) (V, bool) {
	hint := stripeHint()
	st := s.tot.stripe(hint)
	if exp != 0 && !s.ttl.Load() {
		s.ttl.Store(true)
	}
	t := s.tab.Load()
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
	gw, _ := t.gh.spot(h)
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
	// comes with the header instead of a miss after it
	// (BenchmarkCacheSetRatio at a tenth of the keys).
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
		b := t.bucket(i)
		m := ctrl(b.ctrl.Load()).match(tag)
		if m == 0 {
			continue
		}
		// Start the matched slot's line on its way now: the lock below
		// waits for every earlier load (the other candidate's words
		// included), and find then waited for this line after it, a
		// second miss in a row (BenchmarkCacheSetRatio).
		prefetchSlot(&b.slots[slotOf(m)])
		b.sync.lock()
		if t.frozen.Load() {
			t.unlockBucket(i)
			s.awaitTable()
			return s.setCache(k, v, h, tag, exp, cf, rv)
		}
		if j := b.find(k, tag); j >= 0 {
			if cf != nil {
				if cf.fn != nil {
					r, ok, ev := s.computeLocked(t, i, j, cs[x:x+1], cf, exp, hint, rv)
					t.unlockBucket(i)
					s.reportComputed(k, ev, rv)
					return r, ok
				}
				if old, ok := s.liveLocked(t, i, j, hint); ok {
					t.unlockBucket(i)
					s.unreserve(rv)
					return old, true
				}
			}
			s.cowTouchLocked(t, cs[x:x+1])
			if s.ttl.Load() || s.onDel != nil || t.wrote != nil {
				// The entry may have expired (then the Set is an
				// insert), may need its event, or its write time.
				oldExp, expired := s.expiryOf(t, i, j)
				ev := s.replaceLocked(t, i, j, k, v, exp, hint, false, oldExp, expired, rv)
				t.unlockBucket(i)
				if ev.Cause != 0 {
					s.onDel(ev)
				}
				return v, false
			}
			t.update(i, j, k, v, exp, false, s.tickNow(hint), s.slack, &s.pol)
			t.reweigh(i, j, rv)
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
	ggap, gage, known := t.gh.take(h, s.tickNow(hint))
	var lk locked
	lockAll(&lk, t, cs)
	if t.frozen.Load() {
		unlockAll(&lk, t)
		s.awaitTable()
		return s.setCache(k, v, h, tag, exp, cf, rv)
	}
	s.cowTouchLocked(t, lk.idx[:lk.n])
	now := s.tickNow(hint)
	r := s.pol.current()
	// Loaded under the locks: if no entry ever had an expiry when they
	// were taken, every expiry word of these buckets is 0 (a writer that
	// stores one sets ttl first and releases its locks after), and this
	// Set need not read or write them, a cache line saved.
	ttl := s.ttl.Load()
	// Look again: k may have come in since. Then the Set, ticked as an
	// insert, evicted nothing: counted as a fill for Stats.
	for _, i := range cs {
		if j := t.bucket(i).find(k, tag); j >= 0 {
			if cf != nil && cf.fn != nil {
				r, ok, ev := s.computeLocked(t, i, j, lk.idx[:lk.n], cf, exp, hint, rv)
				unlockAll(&lk, t)
				s.reportComputed(k, ev, rv)
				return r, ok
			}
			st.fills.Add(1)
			s.ticks.tick(hint)
			if cf != nil {
				if old, ok := s.liveLocked(t, i, j, hint); ok {
					unlockAll(&lk, t)
					s.unreserve(rv)
					return old, true
				}
			}
			oldExp, expired := s.expiryOf(t, i, j)
			ev := s.replaceLocked(t, i, j, k, v, exp, hint, true, oldExp, expired, rv)
			unlockAll(&lk, t)
			if ev.Cause != 0 {
				s.onDel(ev)
			}
			return v, false
		}
	}
	if cf != nil && cf.fn != nil {
		// An absent key: the function decides once, and a retry (into a
		// table that replaced this one) keeps its decision.
		if !cf.decided {
			var zero V
			cf.val, cf.op = cf.fn(zero, false)
			cf.decided = true
		}
		if cf.op != ComputeSet {
			unlockAll(&lk, t)
			s.unreserve(rv)
			var zero V
			return zero, false
		}
		v = cf.val
		if rv != nil {
			switch s.weighComputed(k, v, rv) {
			case weightMore:
				unlockAll(&lk, t)
				return v, false
			case weightRefused:
				// Stored and evicted at once: Compute reports k absent.
				cf.op = ComputeKeep
				st.updates.Add(1)
				st.evictions.Add(1)
				unlockAll(&lk, t)
				s.reportComputed(k, DeletionEvent[K, V]{}, rv)
				var zero V
				return zero, false
			}
		}
	}
	var loads [hashfn.MaxChoices]uint32
	for x, i := range cs {
		// A short bucket counts its missing slot as full.
		loads[x] = uint32(ctrl(t.cbucket(i).b.ctrl.Load()).load() + t.size - slotsOf(t.capAt(i)))
	}
	i := cs[t.choose(loads[:t.d], h)]
	cb := t.cbucket(i)
	b := cb.b.ref()
	cw := ctrl(b.ctrl.Load())
	j := -1
	var (
		victimAcc uint32
		victimW   uint32 // the victim's weight, for the stats recorder
		victimKey K
		evicted   bool
		grow      bool
		victimEv  DeletionEvent[K, V]
	)
	expiredVictim := false // the key takes an expired entry's slot
	if e := cw.empty(t.capAt(i)); e != 0 {
		// The rule picks a least loaded candidate (one choice: the only
		// one), so if it is full, they all are.
		j = slotOf(e)
		grow = t.live.Add(1) > t.growAt
		st.fills.Add(1)
	} else if !t.final {
		// A table on the way to the final one does not evict: it grows,
		// and the Set writes to the new table (cache_grow.go).
		unlockAll(&lk, t)
		s.grow(t)
		return s.setCache(k, v, h, tag, exp, cf, rv)
	} else {
		var (
			expired bool
			ev      evictee[K, V]
			moved   bool
		)
		i, j, expired = s.victim(t, cs, now, r)
		if !expired && rv == nil && s.pol.moves.Load() && s.walks.Load() == 0 {
			// The victim's slot may go to a resident that moves
			// instead (relocate.go); then the new key takes the
			// resident's slot.
			var ni uint64
			var nj int
			if ni, nj, ev, moved = s.relocate(t, cs, i, j, now, r); moved {
				i, j, expired = ni, nj, ev.expired
				st.relocations.Add(1)
			}
		}
		cb = t.cbucket(i)
		b = cb.b.ref()
		cw = ctrl(b.ctrl.Load())
		if !moved {
			ev = evictee[K, V]{key: b.slots[j].key, acc: cb.acc[j].Load(), w: 1, expired: expired}
			if s.onDel != nil {
				ev.val = b.slots[j].val
			}
			if s.rec != nil {
				ev.w = t.weightAt(i, j)
			}
		}
		// An eviction is counted by the tick below (counters.go).
		if s.onDel != nil {
			cause := DeletionEvicted
			if expired {
				cause = DeletionExpired
			}
			victimEv = DeletionEvent[K, V]{Key: ev.key, Value: ev.val, Cause: cause}
		}
		victimW = ev.w
		if expired {
			st.expiredVictims.Add(1)
			expiredVictim = true
		} else {
			evicted = true
			victimAcc = ev.acc
			victimKey = ev.key
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
	// The victim's weight goes, the newcomer's comes.
	t.reweigh(i, j, rv)
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
		if exp == expByCalc {
			exp = s.writeExpiry(k, v, true, 0)
		}
		storeRelaxedInt64(&m.exp[j], exp)
	}
	if t.wrote != nil {
		t.stampWrite(i, j, s.nowNanos())
	}
	storeRelaxed32(&cb.acc[j], r.newcomer(ggap, gage, known, now))
	storeRelaxed(&b.ctrl, uint64(cw.withSlot(j, tag)))
	unlockAll(&lk, t)
	// Leave the victim's policy word in the ghost, for when its key
	// returns, after the locks are released (the key was copied while the
	// slot was ours; keys are values, so reading it now is safe). Its hash
	// is worked out again: a slot keeps no hash, and one eviction's hash
	// costs less than writing a hash beside every insert.
	if evicted {
		t.gh.put(t.hash(victimKey), victimAcc, now)
	}
	if s.rec != nil && (evicted || expiredVictim) {
		s.recordVictim(expiredVictim, victimW)
	}
	if victimEv.Cause != 0 {
		s.onDel(victimEv)
	}
	if grow {
		s.grow(t)
	}
	return v, false
}

// liveLocked is GetOrSet's look at k's entry, in slot j of bucket i, which
// the caller has locked: unless the entry has expired, it counts a hit,
// touches the entry as a Get would (its policy word, and its expiry under
// a calculator), and returns its value and true.
func (s *Cache[K, V]) liveLocked(t *cacheTable[K, V], i uint64, j int, hint uint64) (V, bool) {
	m := &t.meta[i]
	if s.ttl.Load() {
		if exp := m.exp[j].Load(); exp != 0 {
			now := s.nowNanos()
			if exp <= now {
				var zero V
				return zero, false
			}
			if s.calc != nil {
				s.slide(t, i, j, t.cbucket(i).b.slots[j].key, t.cbucket(i).b.slots[j].val, exp, now)
			}
		}
	}
	t.touch(i, j, t.cbucket(i).acc[j].Load(), s.tickNow(hint), s.slack, &s.pol)
	s.tot.hit(hint)
	s.recordHits(1)
	return t.cbucket(i).b.slots[j].val, true
}
