package store

// Relocation: a wider eviction sample without wider lookups.
//
// A key can only go into one of its candidates, so an eviction chooses
// among their d × BucketSize entries (16 by default, evict.go). On
// workloads whose keys recur in long cycles (loops, scans mixed with a hot
// set) that sample is what limits the hit ratio: Belady's rule applied to
// the 16 candidates alone stays points below Belady's rule applied to the
// whole cache. Relocation lets an eviction reach further, as a cuckoo
// hash table moves a key to make room: each resident of the new key's
// candidates has one other candidate of its own (d = 2), and if that
// bucket holds an entry the ranking scores above every candidate, the
// resident moves into that entry's slot (which evicts it), and the new
// key takes the resident's. One eviction then chooses among up to
// 16 + 16 × 8 entries, while a lookup still touches at most the key's
// two candidates.
//
// A move is done under the locks of both of the resident's candidates
// (the new key's candidate, held already, and its other one, taken with
// tryLock, skipped when another writer holds it), so the rule that a key
// enters a bucket only under the locks of all its candidates holds, and
// every writer that must find a key (an update's second look, Delete,
// Compute) finds it where it is. The resident is written to its new slot
// before its old one is given to the new key, so a Get finds it in one
// or the other, but a Get that reads the new bucket before the move and
// the old one after it misses it, as a Get may miss a key evicted and
// set again; a loop over the cache (All) stops relocation while it runs,
// so that it yields every key present throughout exactly once.
//
// A slot keeps no hash, so each resident looked at is hashed again, and
// its other bucket is scanned: an eviction that relocates costs several
// times one that does not. So the cache relocates only where its
// miniatures show that it pays (shadow.go: a twin of the miniature of the
// ranking in use relocates; the cache tries relocation from the first
// evidence on and keeps it if the twin leads, trial.go, and later
// relocates while the twin hits clearly more often), and an eviction
// whose victim is a key that has shown no reuse yet does not look
// further: any other such key would do no better. Relocation needs d = 2
// and is off in a cache bounded by weight, whose victims are not tied to
// the candidates (weight.go).
//
// What the wider sample still misses: in a loop over more keys than the
// cache holds, the entry Belady's rule evicts is the newest one, and an
// eviction finds a newcomer only once it is in the sample; until then it
// holds a slot that a key of the loop's kept subset could have. Offering
// the last inserts as candidates needs a bound counted in entries rather
// than in slots, since the new key must still land in a candidate of its
// own. That design (a table an eighth larger than the bound, and the last
// 8 inserts and the residents' other buckets beside the candidates, taken
// without moves) was measured on the miniature cache run at full size,
// each row's best ranking pinned, means of three hash seeds (one for
// P12): +8.8 points in sum over the 40 LIRS rows of bench --corpus
// (lirs/gli at 25% +1.3, lirs/2_pools at 1% +1.2, lirs/ps at 25% +0.7),
// −0.9 over OLTP's 4 rows and −2.5 over P12's (1% −1.6, 5% −0.9), where
// newcomers that come back are evicted before their second use; without
// the last inserts, −1.2 over the LIRS rows. It is not built: +5.4 over
// the 48 rows is bought with an eighth more memory and a bound the
// table's shape no longer keeps, and the miniatures choosing per workload
// whether to offer the last inserts, as they choose relocation, would
// raise it to at most +8.4.

// evictee is the entry an insert evicts: what the listener, the stats
// recorder and the ghost are told of it.
type evictee[K comparable, V any] struct {
	key     K
	val     V
	acc     uint32 // its policy word, for the ghost
	w       uint32 // its weight
	expired bool   // it had expired: an expiration, not an eviction
}

// disposable reports whether the policy word acc, at tick unit now, is
// that of a key that has shown no reuse and is past the ranking's window:
// the first kind of entry a ranking that reads gaps evicts.
func (r *rank) disposable(acc uint32, now uint64) bool {
	return r.gmask != 0 && gapCodeOf(acc) == noGap && ageOf(acc, now) >= r.window
}

// relocate looks past the victim (vi, vj) that victim chose among the
// candidates cs, which the caller holds: for each resident of cs, at its
// other candidate. If one of those buckets holds an entry that scores
// above the victim (or has expired), it moves that bucket's resident
// there, evicting the entry, and returns the resident's old slot (ni, nj)
// for the new key, what it evicted, and true. Otherwise it changes
// nothing and returns false. now is the tick unit, r the ranking in use.
//
// The other buckets are scanned without their locks (their control and
// policy words are atomics), and only the one chosen is locked, with
// tryLock, and checked again: a lock per bucket looked at took about 15%
// of a relocating Set's CPU profile (BenchmarkRelocation). The residents' keys
// are prefetched before they are hashed, and their other buckets before
// they are scanned, so that the cache misses of each step overlap rather
// than wait one for another.
func (s *Cache[K, V]) relocate(t *cacheTable[K, V], cs []uint64, vi uint64, vj int, now uint64, r *rank) (ni uint64, nj int, ev evictee[K, V], ok bool) {
	va := t.cbucket(vi).acc[vj].Load()
	if len(cs) != 2 || r.disposable(va, now) {
		return 0, 0, ev, false
	}
	if s.strKeys {
		for _, ci := range cs {
			cb := t.cbucket(ci)
			for m := ctrl(cb.b.ctrl.Load()).full(); m != 0; m &= m - 1 {
				prefetchKey(&cb.b.slots[slotOf(m)].key, true)
			}
		}
	}
	ttl := s.ttl.Load()
	var nowNanos int64
	if ttl {
		nowNanos = s.nowNanos()
	}
	best, oldest := r.score(va, now)
	var (
		pick    = -1   // the index in alts of the bucket the resident moves to
		aj      int    // the slot there that it takes
		aacc    uint32 // that slot's policy word when scanned
		expired bool
	)
	// First every resident's other candidate, each prefetched as it is
	// found, so that the scans below find them in the cache.
	var (
		alts [2 * slotsPerBucket]uint64
		from [2 * slotsPerBucket]uint8 // x·slotsPerBucket + j: slot j of cs[x]
		tags [2 * slotsPerBucket]uint8
		n    int
	)
	for x, ci := range cs {
		cb := t.cbucket(ci)
		for m := ctrl(cb.b.ctrl.Load()).full(); m != 0; m &= m - 1 {
			j := slotOf(m)
			h := t.hash(cb.b.slots[j].key)
			c0, c1 := t.cand2(h)
			a := c0
			if a == ci {
				a = c1
			}
			if a == cs[0] || a == cs[1] {
				continue // a candidate already: nothing new there
			}
			prefetchCacheHeader(t.cbucket(a))
			alts[n], from[n], tags[n] = a, uint8(x*slotsPerBucket+j), tagOf(h)
			n++
		}
	}
scan:
	for y, a := range alts[:n] {
		ab := t.cbucket(a)
		for am := ctrl(ab.b.ctrl.Load()).full(); am != 0; am &= am - 1 {
			x := slotOf(am)
			w := ab.acc[x].Load()
			if ttl {
				if e := t.meta[a].exp[x].Load(); e != 0 && e <= nowNanos {
					pick, aj, aacc, expired = y, x, w, true
					break scan
				}
			}
			if sc, age := r.score(w, now); sc > best || sc == best && age > oldest {
				best, oldest = sc, age
				pick, aj, aacc = y, x, w
			}
		}
		// An entry that has shown no reuse is as good a victim as any
		// further one.
		if pick >= 0 && r.disposable(aacc, now) {
			break scan
		}
	}
	if pick < 0 {
		return 0, 0, ev, false
	}
	alt, ri, rj, rtag := alts[pick], cs[from[pick]/slotsPerBucket], int(from[pick]%slotsPerBucket), tags[pick]
	ab, rb := t.cbucket(alt), t.cbucket(ri)
	if !ab.b.sync.tryLock() {
		return 0, 0, ev, false
	}
	// Under the lock, the entry must still be the one scanned (a writer
	// may have replaced or removed it since), the table must not be on
	// its way out (its copier may have taken this bucket already), and no
	// loop over the cache may have begun since the caller looked: a loop
	// counts itself before it reads a bucket, so one that read this
	// bucket before the lock was taken is counted by now, and one that
	// reads it later waits for the move and sees it whole.
	if t.frozen.Load() || s.walks.Load() != 0 || ctrl(ab.b.ctrl.Load()).at(aj)&0x80 == 0 || ab.acc[aj].Load() != aacc {
		t.unlockBucket(alt)
		return 0, 0, ev, false
	}
	s.cowTouchLocked(t, []uint64{alt})
	b := ab.b.ref()
	ev = evictee[K, V]{key: b.slots[aj].key, val: b.slots[aj].val, acc: aacc,
		w: t.weightAt(alt, aj), expired: expired}
	e := rb.b.slots[rj]
	if t.lay.words > 0 {
		writeSlotLocked(&b.slots[aj], &e, 0, t.lay)
	} else {
		b.slots[aj] = e
	}
	storeRelaxed32(&ab.acc[aj], rb.acc[rj].Load())
	if ttl {
		storeRelaxedInt64(&t.meta[alt].exp[aj], t.meta[ri].exp[rj].Load())
	}
	if t.wrote != nil {
		t.wrote[alt].at[aj].Store(t.wrote[ri].at[rj].Load())
	}
	storeRelaxed(&b.ctrl, uint64(ctrl(b.ctrl.Load()).withSlot(aj, rtag)))
	t.unlockBucket(alt)
	return ri, rj, ev, true
}
