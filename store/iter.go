package store

import "iter"

// All returns an iterator over the entries, for range loops:
//
//	for k, v := range s.All() { ... }
//
// It walks the table bucket by bucket, copying each bucket's entries under
// that bucket's read lock and yielding them after releasing it, so the
// loop body may call any method of the store (Set, Delete, Get). Other
// goroutines keep reading and writing throughout. Like a Go map's range, it
// is not a snapshot: every key present for the whole loop is yielded
// exactly once, a key set or deleted during the loop may or may not be, and
// a key deleted and set again may be yielded twice.
//
// To keep keys from moving under it, All first finishes a growth under way
// (in small batches, so writers are never held up for long) and keeps the
// table from growing until the loop ends: keys that find their candidates
// full meanwhile go to the stash, and the table grows at the first write
// after the loop. A loop that stops early releases the table too.
func (s *Store[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		t := s.pin()
		defer s.unpin()
		var (
			buf  [slotsPerBucket]slot[K, V]
			exps [slotsPerBucket]int64
			now  int64
		)
		if s.cache && s.ttl.Load() {
			now = s.nowNanos()
		}
		for i := range t.n {
			n := t.entriesOf(i, &buf, &exps)
			for j := range n {
				if now != 0 && exps[j] != 0 && exps[j] <= now {
					continue // expired (only bounded stores have expiries)
				}
				if !yield(buf[j].key, buf[j].val) {
					return
				}
			}
		}
		for _, e := range t.stash.entries() {
			if !yield(e.key, e.val) {
				return
			}
		}
	}
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
