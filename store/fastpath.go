package store

import "github.com/twochoice/twochoice/hashfn"

// The map's writers while its gate is open (gate.go): each holds the
// buckets of its key only, so writes on different keys run in parallel.
// The table is then the only one (no move is under way) and no snapshot
// view is being taken. Whatever these paths cannot do alone they hand to
// the serialized path, having changed nothing: a key that may be in the
// stash (its first candidate's stash hint is up), a new key whose
// candidates are all full (it goes to the stash).

// fastResult is what a fast write did.
type fastResult uint8

const (
	fastSlow     fastResult = iota // nothing: the serialized path must do it
	fastUpdated                    // k was there: its value is replaced (or, with ifAbsent, read)
	fastInserted                   // k was new: it is in an empty slot of a candidate
	fastDeleted                    // k was there and is gone
	fastAbsent                     // k is not in the map (a Delete that found nothing)
)

// setFast stores v for k: an update in place, under the lock of the bucket
// that holds k, or an insert into an empty slot of the candidate the rule
// picks, under the locks of all of k's candidates. With ifAbsent a value
// k has is left as it is and returned (GetOrSet).
func (t *table[K, V]) setFast(k K, v V, h uint64, tag uint8, ifAbsent bool) (V, fastResult) {
	var c [hashfn.MaxChoices]uint64
	var cs []uint64
	if t.d == 2 && t.scheme != hashfn.Double {
		// cands written out: it does not fit the inlining budget.
		c[0], c[1] = t.cand2Words(h)
		cs = c[:2]
	} else {
		cs = t.cands(h, &c)
	}
	// In a table past a core's L2, the slot an update finds or an insert
	// fills would be a miss after the header's: prefetch them together
	// (bigMapTable).
	if t.prefetch {
		for _, i := range cs {
			prefetchGroup(t.group(i))
		}
	}
	l := t.lay
	// An update locks only the bucket that holds the key: found by its
	// tag first, then under the lock (a key only enters a bucket under
	// the locks of all its candidates, so while this one is held, k
	// cannot appear in another).
	for _, i := range cs {
		b := t.bucket(i)
		if ctrl(b.ctrl.Load()).match(tag) == 0 {
			continue
		}
		b.sync.lock()
		if j := b.find(k, tag); j >= 0 {
			if ifAbsent {
				old := b.slots[j].val
				b.sync.unlock()
				return old, fastUpdated
			}
			b.updateLocked(j, v, l)
			b.sync.unlock()
			return v, fastUpdated
		}
		b.sync.unlock()
	}
	var held locked
	t.lockAll(&held, cs)
	defer t.unlockAll(&held)
	// Look again, under the locks: another writer may have put k in
	// since. A raised stash hint on the first candidate means k may be
	// in the stash, which the serialized path owns.
	for _, i := range cs {
		b := t.bucket(i)
		if j := b.find(k, tag); j >= 0 {
			if ifAbsent {
				return b.slots[j].val, fastUpdated
			}
			b.updateLocked(j, v, l)
			return v, fastUpdated
		}
	}
	if t.hdr(cs[0]).sync.hint() != 0 {
		var zero V
		return zero, fastSlow
	}
	var loads [hashfn.MaxChoices]uint32
	for x, i := range cs {
		loads[x] = t.load(i)
	}
	b := t.bucket(cs[t.choose(loads[:len(cs)], h)])
	e := ctrl(b.ctrl.Load()).empty(t.capMask)
	if e == 0 {
		var zero V
		return zero, fastSlow // every candidate is full: the stash
	}
	b.put(slotOf(e), k, v, tag, l)
	t.entries.Add(1)
	return v, fastInserted
}

// deleteFast removes k from the bucket that holds it, under that bucket's
// lock.
func (t *table[K, V]) deleteFast(k K, h uint64, tag uint8) fastResult {
	var c [hashfn.MaxChoices]uint64
	cs := t.cands(h, &c)
	for _, i := range cs {
		if ctrl(t.hdr(i).ctrl.Load()).match(tag) == 0 {
			continue
		}
		b := t.bucket(i)
		b.sync.lock()
		if j := b.find(k, tag); j >= 0 {
			b.removeLocked(j, t.lay)
			b.sync.unlock()
			t.entries.Add(-1)
			return fastDeleted
		}
		b.sync.unlock()
	}
	// Not in a bucket: in the stash, if anywhere, and only if the first
	// candidate's hint is up (a stashed key keeps it up, and no key
	// enters the stash while the gate is open).
	if t.hdr(cs[0]).sync.hint() != 0 {
		return fastSlow
	}
	return fastAbsent
}

// lockAll takes the distinct buckets of cs exclusively, in increasing
// order.
func (t *table[K, V]) lockAll(lk *locked, cs []uint64) {
	lk.set(cs)
	for _, i := range lk.idx[:lk.n] {
		t.hdr(i).sync.lock()
	}
}

// unlockAll releases what lockAll took.
func (t *table[K, V]) unlockAll(lk *locked) {
	for _, i := range lk.idx[:lk.n] {
		t.hdr(i).sync.unlock()
	}
}
