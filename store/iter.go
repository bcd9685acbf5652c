package store

import "iter"

// All returns an iterator over the entries, for range loops:
//
//	for k, v := range s.All() { ... }
//
// It walks the table bucket by bucket, copying each bucket's entries under
// that bucket's read lock and yielding them after releasing it, so the
// loop body may call any method of the store (Set, Delete, Get, Clear).
// Other goroutines keep reading and writing throughout. Like a Go map's
// range, it is not a snapshot. The loop reaches an entry when it copies
// the entry's bucket (the stash's entries, last, all at once), and:
//
//   - every key present for the whole loop is yielded exactly once;
//   - a key removed before the loop reaches it (by Delete, Clear, an
//     eviction, or the expiry of its TTL) is not yielded, as a Go map's
//     range does not produce an entry removed before it is reached; one
//     removed after its bucket was reached, while the loop body runs for
//     the entries before it, is still yielded with the value it had then;
//   - a key set during the loop may or may not be yielded (after a Clear,
//     none is: the loop ends), and a key deleted and set again may be
//     yielded twice.
//
// To keep keys from moving under it, All first finishes a growth under way
// (in small batches, so writers are never held up for long) and keeps the
// table from growing until the loop ends: keys that find their candidates
// full meanwhile go to the stash, and the table grows at the first Set of
// a new key after the loop (an update or a Delete does not grow it). A
// loop that stops early releases the table too.
func (s *Map[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		t := s.pin()
		defer s.unpin()
		visit(t, func() bool { return s.tabs.Load().cur != t }, nil, yield)
	}
}

// All returns an iterator over the cache's live entries, with the
// guarantees of [Map.All]: an entry that expires before the loop reaches
// its bucket is not yielded. While a loop runs, evictions do not move
// entries between buckets (relocate.go).
func (s *Cache[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		s.walks.Add(1)
		defer s.walks.Add(-1)
		t := s.tab.Load()
		visit(t, func() bool { return s.tab.Load() != t }, s.nowNanos, yield)
	}
}

// visit yields the entries of t bucket by bucket, then its stash, and
// stops when cleared reports that Clear replaced t. now, if not nil, tells
// the time, to leave out the entries that have expired.
func visit[K comparable, V any](t visited[K, V], cleared func() bool, now func() int64, yield func(K, V) bool) {
	var (
		buf  [slotsPerBucket]slot[K, V]
		exps [slotsPerBucket]int64
	)
	for i := range t.geom().n {
		n := t.entriesOf(i, &buf, &exps)
		// Clear replaces the table: its keys are all gone, and the copy
		// may have been taken after that. A check after the copy, not
		// before, so that a Clear between the two cannot slip by; the
		// keys set since are in the new table, and need not be yielded.
		if cleared() {
			return
		}
		var at int64 // read once per bucket that has expiries
		for j := range n {
			if now != nil && exps[j] != 0 {
				if at == 0 {
					at = now()
				}
				if exps[j] <= at {
					continue // expired before the loop reached it
				}
			}
			if !yield(buf[j].key, buf[j].val) {
				return
			}
		}
	}
	stashed := t.stashed()
	if cleared() {
		return
	}
	for _, e := range stashed {
		if !yield(e.key, e.val) {
			return
		}
	}
}

// Keys returns an iterator over the keys, with All's guarantees.
func (s *Map[K, V]) Keys() iter.Seq[K] { return keysOf(s.All()) }

// Keys returns an iterator over the keys, with All's guarantees.
func (s *Cache[K, V]) Keys() iter.Seq[K] { return keysOf(s.All()) }

// Values returns an iterator over the values, with All's guarantees: a
// value is yielded once for each key All would yield.
func (s *Map[K, V]) Values() iter.Seq[V] { return valuesOf(s.All()) }

// Values returns an iterator over the values of the live entries, with
// All's guarantees.
func (s *Cache[K, V]) Values() iter.Seq[V] { return valuesOf(s.All()) }

func keysOf[K, V any](all iter.Seq2[K, V]) iter.Seq[K] {
	return func(yield func(K) bool) {
		for k := range all {
			if !yield(k) {
				return
			}
		}
	}
}

func valuesOf[K, V any](all iter.Seq2[K, V]) iter.Seq[V] {
	return func(yield func(V) bool) {
		for _, v := range all {
			if !yield(v) {
				return
			}
		}
	}
}
