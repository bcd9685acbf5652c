package store

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/twochoice/twochoice/hashfn"
)

// newTestStore builds a store and registers the invariant checker to run
// when the test ends, as bbolt's tests run db.MustCheck.
func newTestStore[K comparable, V any](tb testing.TB, o Options) *Store[K, V] {
	tb.Helper()
	s, err := New[K, V](o)
	if err != nil {
		tb.Fatalf("New(%+v): %v", o, err)
	}
	tb.Cleanup(func() {
		if err := s.checkInvariants(); err != nil {
			tb.Errorf("invariants (options %+v): %v", s.opts, err)
		}
	})
	return s
}

// setHash makes f the hash function of s's keys, for tests that need keys
// to collide: the current table's, which the tables it grows into share
// (a re-key replaces it).
func setHash[K comparable, V any](s *Store[K, V], f func(K) uint64) {
	s.tabs.Load().cur.hash = f
}

// checkInvariants verifies the table's structure; call it when no other
// goroutine uses the store. It checks:
//   - every key sits in one of its candidate buckets of its table, or in
//     that table's stash, under the tag of its hash, and appears once;
//   - no slot past BucketSize is used, and every empty slot is zeroed (so
//     the table holds no stale references);
//   - every control byte is empty (fresh or used) or full with a tag;
//   - every stash hint counts the stashed keys whose first candidate it is
//     (or is saturated), in the current table; in the old one, at least
//     the keys left in its stash (a growth moves them and leaves the hints);
//   - during a growth, the stashed keys already visited are not in the old
//     stash;
//   - a key not equal to itself (a NaN) hashes at random, so only its
//     count is checked, and hints may exceed the stash's other keys;
//   - every table's entry count matches its contents, and the store's
//     count matches the tables;
//   - during a growth, the old buckets already passed are empty;
//   - no bucket lock is held.
func (s *Store[K, V]) checkInvariants() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.tabs.Load()
	seen := make(map[K]string)
	total := int64(0)
	for name, t := range map[string]*table[K, V]{"cur": st.cur, "old": st.old} {
		if t == nil {
			continue
		}
		n, err := t.check(s, name, seen)
		if err != nil {
			return err
		}
		total += n
	}
	if st.old != nil {
		for _, e := range s.moving[:s.snext] {
			if st.old.stash.has(e.key) {
				return fmt.Errorf("old stash: key %v visited by the move but still there", e.key)
			}
		}
		n := int(st.old.n)
		full := s.next / n // passes done over every bucket
		visited := make(map[uint64]bool)
		for x := full * n; x < s.next; x++ {
			i := s.moveOrder(x)
			if visited[i] {
				return fmt.Errorf("old bucket %d visited twice in pass %d (move order is not a permutation)", i, full)
			}
			visited[i] = true
		}
		for i := range st.old.n {
			done := full
			if visited[i] {
				done++
			}
			c := ctrl(st.old.bucket(i).ctrl.Load())
			for p := 0; p < min(done, movePasses); p++ {
				if m := passMask(c, p); m != 0 {
					return fmt.Errorf("old bucket %d: pass %d done but control word %#x keeps slots %#x", i, p, uint64(c), m)
				}
			}
		}
	}
	if s.cache {
		if got := st.cur.live.Load(); got != total {
			return fmt.Errorf("cache: Len counts %d entries, the table holds %d", got, total)
		}
		if total > int64(s.opts.MaxEntries) {
			return fmt.Errorf("cache: %d entries, MaxEntries %d", total, s.opts.MaxEntries)
		}
		if slots := int64(st.cur.n)*int64(st.cur.size) - int64(st.cur.short); slots != int64(s.opts.MaxEntries) {
			return fmt.Errorf("cache: %d slots, MaxEntries %d", slots, s.opts.MaxEntries)
		}
		return nil
	}
	if got := s.count.Load(); got != total {
		return fmt.Errorf("Len counts %d entries, the tables hold %d", got, total)
	}
	return nil
}

func (t *table[K, V]) check(s *Store[K, V], name string, seen map[K]string) (int64, error) {
	var c [hashfn.MaxChoices]uint64
	n := int64(0)
	for i := range t.n {
		b := t.bucket(i)
		if w := b.sync.v.Load(); w&(readerMask|writerBit) != 0 {
			return 0, fmt.Errorf("%s bucket %d: lock held (word %#x)", name, i, w)
		}
		cw := ctrl(b.ctrl.Load())
		capMask := t.capMask
		if t.meta != nil {
			capMask = t.capAt(i)
		}
		if inUse := capMask >> 7 * 0xff; uint64(cw)&^inUse != 0 { // every byte of the first BucketSize
			return 0, fmt.Errorf("%s bucket %d: control word %#x uses slots past its %d", name, i, uint64(cw), slotsOf(capMask))
		}
		for j := range slotsPerBucket {
			cb := uint8(uint64(cw) >> (8 * j))
			sl := &b.slots[j]
			if cb == emptyFresh || cb == emptyUsed {
				// The old table keeps the slots it moved (grow.go's
				// mover); the current one zeroes what it empties.
				if name == "cur" && !reflect.ValueOf(sl).Elem().IsZero() {
					return 0, fmt.Errorf("%s bucket %d slot %d: empty but not zeroed", name, i, j)
				}
				if t.meta != nil {
					m := &t.meta[i]
					if t.cbucket(i).acc[j].Load() != 0 || m.exp[j].Load() != 0 {
						return 0, fmt.Errorf("cache bucket %d slot %d: empty but its metadata is not zeroed", i, j)
					}
				}
				continue
			}
			if cb&0x80 == 0 {
				return 0, fmt.Errorf("%s bucket %d slot %d: bad control byte %#x", name, i, j, cb)
			}
			if sl.key != sl.key {
				n++ // a NaN: anywhere, and never found
				continue
			}
			h := t.hash(sl.key)
			// Cache writers skip the expiry words while no entry ever had
			// one (setCache): they must all be 0 then.
			if t.meta != nil && !s.ttl.Load() && t.meta[i].exp[j].Load() != 0 {
				return 0, fmt.Errorf("cache bucket %d slot %d: expiry %d but the store's ttl flag is off", i, j, t.meta[i].exp[j].Load())
			}
			// Every entry's policy word carries the live bit, so that no
			// entry's word is an emptied slot's 0 (table.touch).
			if t.meta != nil && t.cbucket(i).acc[j].Load()&liveBit == 0 {
				return 0, fmt.Errorf("cache bucket %d slot %d: policy word %#x without the live bit", i, j, t.cbucket(i).acc[j].Load())
			}
			if tagOf(h) != cb {
				return 0, fmt.Errorf("%s bucket %d slot %d: key %v has tag %#x, control byte %#x", name, i, j, sl.key, tagOf(h), cb)
			}
			ok := false
			for _, ci := range t.candidates(h, &c) {
				ok = ok || ci == i
			}
			if !ok {
				return 0, fmt.Errorf("%s bucket %d: key %v is not in a candidate (candidates %v)", name, i, sl.key, c[:t.d])
			}
			if where, dup := seen[sl.key]; dup {
				return 0, fmt.Errorf("key %v twice: %s and %s bucket %d", sl.key, where, name, i)
			}
			seen[sl.key] = fmt.Sprintf("%s bucket %d", name, i)
			n++
		}
	}
	hints := make(map[uint64]uint64)
	nans := 0
	for _, e := range t.stash.entries() {
		n++
		if e.key != e.key {
			nans++
			continue
		}
		if where, dup := seen[e.key]; dup {
			return 0, fmt.Errorf("key %v twice: %s and %s stash", e.key, where, name)
		}
		seen[e.key] = name + " stash"
		hints[t.candidates(t.hash(e.key), &c)[0]]++
	}
	if got := int64(t.stash.len()); got != int64(len(t.stash.entries())) {
		return 0, fmt.Errorf("%s stash: size %d, holds %d", name, got, len(t.stash.entries()))
	}
	for i := range t.n {
		got, want := t.bucket(i).sync.hint(), hints[i]
		switch {
		case got == hintMax, got == min(want, hintMax):
		case name == "old" && got > want:
		case nans > 0 && got > want:
			// NaNs raised hints where their hash then fell.
		default:
			return 0, fmt.Errorf("%s bucket %d: stash hint %d, %d stashed keys have it first", name, i, got, want)
		}
	}
	if got := t.entries; got != n && t.meta == nil { // a cache counts in live
		return 0, fmt.Errorf("%s table counts %d entries, holds %d", name, got, n)
	}
	return n, nil
}

// The checker must be able to fail: break a store in each way it checks.
func TestInvariantCheckerCatchesCorruption(t *testing.T) {
	build := func() *Store[string, int] {
		s, err := New[string, int](Options{Seed: 7, BucketSize: 2, Choices: 2})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 100 {
			s.Set(fmt.Sprint("k", i), i)
		}
		if err := s.checkInvariants(); err != nil {
			t.Fatalf("healthy store fails: %v", err)
		}
		return s
	}
	fullSlot := func(s *Store[string, int]) (*bucketOf[string, int], int) {
		t := s.tabs.Load().cur
		for i := range t.n {
			if m := ctrl(t.bucket(i).ctrl.Load()).full(); m != 0 {
				return t.bucket(i), slotOf(m)
			}
		}
		panic("no full slot")
	}
	for name, breakIt := range map[string]func(s *Store[string, int]){
		"wrong tag": func(s *Store[string, int]) {
			b, j := fullSlot(s)
			b.ctrl.Store(uint64(ctrl(b.ctrl.Load()).withSlot(j, tagOf(s.hash(b.slots[j].key))^1)))
		},
		"wrong bucket": func(s *Store[string, int]) {
			b, j := fullSlot(s)
			b.slots[j].key = "not placed here"
			b.ctrl.Store(uint64(ctrl(b.ctrl.Load()).withSlot(j, tagOf(s.hash("not placed here")))))
		},
		"count":     func(s *Store[string, int]) { s.count.Add(1) },
		"lock held": func(s *Store[string, int]) { b, _ := fullSlot(s); b.sync.rlock() },
		"stale slot": func(s *Store[string, int]) {
			b, j := fullSlot(s)
			b.ctrl.Store(uint64(ctrl(b.ctrl.Load()).withSlot(j, 0)))
		},
		"stash hint":   func(s *Store[string, int]) { b, _ := fullSlot(s); b.sync.addHint(1) },
		"past the end": func(s *Store[string, int]) { b, _ := fullSlot(s); b.ctrl.Store(b.ctrl.Load() | 0x80<<56) },
	} {
		s := build()
		breakIt(s)
		if err := s.checkInvariants(); err == nil {
			t.Errorf("%s: corruption not caught", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}
