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
func (s *Store[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		t := s.pin()
		defer s.unpin()
		var (
			buf  [slotsPerBucket]slot[K, V]
			exps [slotsPerBucket]int64
		)
		for i := range t.n {
			n := t.entriesOf(i, &buf, &exps)
			// Clear replaces the table: its keys are all gone, and the
			// copy may have been taken after that. A check after the
			// copy, not before, so that a Clear between the two cannot
			// slip by; the keys set since are in the new table, and
			// need not be yielded.
			if s.cleared(t) {
				return
			}
			var now int64 // read once per bucket that has expiries
			for j := range n {
				if s.cache && exps[j] != 0 {
					if now == 0 {
						now = s.nowNanos()
					}
					if exps[j] <= now {
						continue // expired before the loop reached it
					}
				}
				if !yield(buf[j].key, buf[j].val) {
					return
				}
			}
		}
		stashed := t.stash.entries()
		if s.cleared(t) {
			return
		}
		for _, e := range stashed {
			if !yield(e.key, e.val) {
				return
			}
		}
	}
}

// cleared reports whether Clear has replaced the pinned table t (nothing
// else replaces a pinned table).
func (s *Store[K, V]) cleared(t *table[K, V]) bool {
	return s.tabs.Load().cur != t
}

// Keys returns an iterator over the keys, with All's guarantees.
func (s *Store[K, V]) Keys() iter.Seq[K] {
	return func(yield func(K) bool) {
		for k := range s.All() {
			if !yield(k) {
				return
			}
		}
	}
}
