package store

// ComputeOp is what a Compute function does with its key's entry.
type ComputeOp uint8

const (
	// ComputeKeep leaves the entry as it was: present with its value, or
	// absent.
	ComputeKeep ComputeOp = iota
	// ComputeSet stores the returned value, as Set would.
	ComputeSet
	// ComputeDelete removes the entry, as Delete would.
	ComputeDelete
)

// computeOf is a Compute in progress through setCache. fn is the
// function; nil means GetOrSet (a live entry is kept, counted as a hit and
// returned with true; else the Set's value is stored). decided, val and op
// are fn's answer for an absent key, kept across a retry of the Set.
type computeOf[V any] struct {
	fn      func(old V, found bool) (V, ComputeOp)
	decided bool
	val     V
	op      ComputeOp
}

// Compute changes k's entry atomically: it calls fn with k's value and
// true, or the zero V and false if k has none (an expired entry is none),
// and then keeps the entry, stores fn's value for k (as Set does, with
// CacheOptions.DefaultTTL), or deletes it, as fn's ComputeOp says. It
// returns k's value after that and whether k has one.
//
// fn runs while Compute holds the locks of k's buckets, so no other write
// of k (Set, Delete, another Compute, an eviction of k) comes between
// fn's look at the value and Compute's change to it; reads go on and see
// the old value until the change. So fn must be short, and must not call
// the cache's writing methods for a key of these buckets: Compute is not
// re-entrant, and such a call deadlocks. fn is called once, or, if k
// appears or goes while Compute waits for its locks, again with the new
// state; in a cache bounded by weight, also again when the value it
// returned for a present k needs room that Compute must first make (which
// it cannot do under k's locks).
//
// A stored value counts as a Set, a deletion as a Delete; Compute does
// not count as a Get.
func (s *Cache[K, V]) Compute(k K, fn func(old V, found bool) (V, ComputeOp)) (V, bool) {
	t := s.tab.Load()
	h := t.hash(k)
	cf := computeOf[V]{fn: fn}
	var zero V
	var (
		v  V
		ok bool
	)
	if s.wsum != nil {
		v, ok = s.setWeighted(k, zero, h, tagOf(h), s.defaultExpiry(), &cf)
	} else {
		v, ok = s.setCache(k, zero, h, tagOf(h), s.defaultExpiry(), &cf, nil)
	}
	if cf.decided && cf.op == ComputeSet {
		return v, true // inserted: setCache returns a Set's v and false
	}
	return v, ok
}

// SetIfAbsent stores v for k if k has no entry (an expired entry is none),
// and reports whether it stored it. It does not count as a Get; a store
// counts as a Set.
func (s *Cache[K, V]) SetIfAbsent(k K, v V) bool {
	stored := false
	s.Compute(k, func(_ V, found bool) (V, ComputeOp) {
		if found {
			return v, ComputeKeep
		}
		stored = true
		return v, ComputeSet
	})
	return stored
}

// ComputeIfAbsent calls fn if k has no entry and stores the value it
// returns if it returns true. It returns k's value after that and whether
// k has one. fn runs under k's buckets' locks, as Compute's function does.
func (s *Cache[K, V]) ComputeIfAbsent(k K, fn func() (V, bool)) (V, bool) {
	return s.Compute(k, func(old V, found bool) (V, ComputeOp) {
		if found {
			return old, ComputeKeep
		}
		if v, ok := fn(); ok {
			return v, ComputeSet
		}
		return old, ComputeKeep
	})
}

// ComputeIfPresent calls fn with k's value if k has one, and stores the
// value fn returns if it returns true, or deletes k if it returns false.
// It returns k's value after that and whether k has one. fn runs under
// k's buckets' locks, as Compute's function does.
func (s *Cache[K, V]) ComputeIfPresent(k K, fn func(old V) (V, bool)) (V, bool) {
	return s.Compute(k, func(old V, found bool) (V, ComputeOp) {
		if !found {
			return old, ComputeKeep
		}
		if v, ok := fn(old); ok {
			return v, ComputeSet
		}
		return old, ComputeDelete
	})
}

// computeLocked applies cf to k's entry in slot j of bucket i; the caller
// holds held, the locked buckets among k's candidates (bucket i at least:
// no other writer of k can run). It returns k's value after and whether k
// has one, and the event of the entry it replaced or removed, if any
// (Cause 0: none), for the caller to report after it releases the locks.
//
// In a cache bounded by weight, rv is the writer's reservation: a value to
// store that needs more than rv holds leaves everything as it was, with
// rv.need set (see setCache), and one heavier than MaxWeight removes k's
// entry, with rv.refused set for the caller to report the value evicted.
func (s *Cache[K, V]) computeLocked(t *cacheTable[K, V], i uint64, j int, held []uint64, cf *computeOf[V], exp int64, hint uint64, rv *reservation[V]) (V, bool, DeletionEvent[K, V]) {
	e := &t.cbucket(i).b.slots[j]
	old := e.val
	oldExp, expired := s.expiryOf(t, i, j)
	found := !expired
	if expired {
		var zero V
		old = zero
	}
	v, op := cf.fn(old, found)
	cf.decided = false // a decision for an absent key no longer holds
	st := s.tot.stripe(hint)
	if op == ComputeSet && rv != nil {
		switch s.weighComputed(e.key, v, rv) {
		case weightMore:
			var zero V
			return zero, false, DeletionEvent[K, V]{}
		case weightRefused:
			// Stored and evicted at once: the entry it replaces goes.
			var ev DeletionEvent[K, V]
			if s.onDel != nil {
				ev = s.leaving(t, i, j, DeletionReplaced)
			}
			s.cowTouchLocked(t, held)
			t.clearSlot(i, j)
			st.updates.Add(1)
			st.evictions.Add(1)
			var zero V
			return zero, false, ev
		}
	}
	var ev DeletionEvent[K, V]
	if op != ComputeKeep && s.onDel != nil {
		ev = DeletionEvent[K, V]{Key: e.key, Value: e.val, Cause: DeletionExpired}
	}
	switch op {
	case ComputeSet:
		s.cowTouchLocked(t, held)
		// An update, or an insert in an expired entry's place.
		return v, true, s.replaceLocked(t, i, j, e.key, v, exp, hint, false, oldExp, expired, rv)
	case ComputeDelete:
		s.cowTouchLocked(t, held)
		w := t.weightAt(i, j)
		t.clearSlot(i, j)
		if found {
			st.deletes.Add(1)
			if ev.Cause != 0 {
				ev.Cause = DeletionDeleted
			}
		} else {
			st.expirations.Add(1)
			s.recordEviction(DeletionExpired, w)
		}
		var zero V
		return zero, false, ev
	}
	if !found {
		var zero V
		return zero, false, ev
	}
	return old, true, ev
}
