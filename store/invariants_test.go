package store

import (
	"fmt"
	"math/bits"
	"reflect"
	"slices"
	"testing"

	"github.com/twochoice/twochoice/hashfn"
)

// setHash makes f the hash function of s's keys, for tests that need keys
// to collide: the current table's, which the tables it grows into share
// (a re-key replaces it).
func setHash[K comparable, V any](s *Map[K, V], f func(K) uint64) {
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
func (s *Map[K, V]) checkInvariants() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.tabs.Load()
	seen := make(map[K]string)
	total := int64(0)
	for name, t := range map[string]*table[K, V]{"cur": st.cur, "old": st.old} {
		if t == nil {
			continue
		}
		n, err := checkBuckets[K, V](t, t.capMask, name, seen, nil)
		if err != nil {
			return err
		}
		n, err = t.checkStash(name, seen, n)
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
	if got := s.count.Load(); got != total {
		return fmt.Errorf("Len counts %d entries, the tables hold %d", got, total)
	}
	return nil
}

// checkInvariants verifies the cache's table; call it when no other
// goroutine uses the cache. It checks what checkBuckets checks, and that
// Len counts what the table holds, within MaxEntries; that the table is
// one of the sizes of the cache's path, not frozen, with a ghost sized for
// its slots, and either final with exactly MaxEntries slots or on the way
// with entries within its threshold; that the table keeps write times if
// and only if the cache refreshes, an empty slot's 0 and a full one's not.
func (s *Cache[K, V]) checkInvariants() error {
	t := s.tab.Load()
	if (t.wts != nil) != (s.wsum != nil) || t.wts != nil && (uint64(len(t.wts)) != t.n || t.wsum != s.wsum) {
		return fmt.Errorf("cache: table weights %v for a cache with weight bound %v", t.wts != nil, s.wsum != nil)
	}
	if (t.wrote != nil) != (s.cfg.RefreshAfter > 0) {
		return fmt.Errorf("cache: write times kept %v, RefreshAfter %v", t.wrote != nil, s.cfg.RefreshAfter)
	}
	var weight int64
	total, err := checkBuckets[K, V](t, t.capMask, "cache", map[K]string{}, func(i uint64, j int, full bool) error {
		m := &t.meta[i]
		acc, exp := t.cbucket(i).acc[j].Load(), m.exp[j].Load()
		if t.wts != nil {
			if w := t.wts[i][j]; !full && w != 0 {
				return fmt.Errorf("cache bucket %d slot %d: empty but weighs %d", i, j, w)
			} else {
				weight += int64(w)
			}
		}
		var wr int64
		if t.wrote != nil {
			wr = t.wrote[i].at[j].Load()
		}
		switch {
		case !full && wr != 0:
			return fmt.Errorf("cache bucket %d slot %d: empty but its write time is %d", i, j, wr)
		case full && t.wrote != nil && wr == 0:
			// A write time, or a refresh's mark (negative).
			return fmt.Errorf("cache bucket %d slot %d: an entry without a write time", i, j)
		case !full && (acc != 0 || exp != 0):
			return fmt.Errorf("cache bucket %d slot %d: empty but its metadata is not zeroed", i, j)
		case full && !s.ttl.Load() && exp != 0:
			// Writers skip the expiry words while no entry ever had one
			// (setCache): they must all be 0 then.
			return fmt.Errorf("cache bucket %d slot %d: expiry %d but the cache's ttl flag is off", i, j, exp)
		case full && acc&liveBit == 0:
			// Every entry's policy word carries the live bit, so that no
			// entry's word is an emptied slot's 0 (cacheTable.touch).
			return fmt.Errorf("cache bucket %d slot %d: policy word %#x without the live bit", i, j, acc)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if got := t.live.Load(); got != total {
		return fmt.Errorf("cache: Len counts %d entries, the table holds %d", got, total)
	}
	if s.wsum != nil {
		// At idle no writer holds a reservation: the total is the
		// entries' weights.
		if got := s.wsum.sum.Load(); got != weight || weight > s.cfg.MaxWeight {
			return fmt.Errorf("cache: total weight %d, the entries weigh %d, MaxWeight %d", got, weight, s.cfg.MaxWeight)
		}
	}
	if total > int64(s.options().MaxEntries) {
		return fmt.Errorf("cache: %d entries, MaxEntries %d", total, s.options().MaxEntries)
	}
	o := s.options()
	if sizes := cacheSizes(&o); !slices.Contains(sizes, t.n) || t.final != (t.n == sizes[len(sizes)-1]) {
		return fmt.Errorf("cache: a table of %d buckets (final %v); the sizes of its path are %v", t.n, t.final, sizes)
	}
	if t.frozen.Load() {
		return fmt.Errorf("cache: the table in use is frozen")
	}
	// The ghost is sized for the table's slots, which SetMaximum changes.
	slots := int64(t.n) * int64(o.BucketSize)
	if t.final {
		slots = int64(o.MaxEntries)
	}
	if want := uint64(1) << bits.Len64(uint64(max(ghostPerEntry*slots, 64))-1); uint64(len(t.gh.words)) != want {
		return fmt.Errorf("cache: a ghost of %d words for %d slots, want %d", len(t.gh.words), slots, want)
	}
	if t.final {
		if slots := t.slots(); slots != int64(o.MaxEntries) {
			return fmt.Errorf("cache: %d slots, MaxEntries %d", slots, o.MaxEntries)
		}
	} else if t.size != o.BucketSize || t.short != 0 || total > t.growAt {
		return fmt.Errorf("cache: a table on the way of %d buckets of %d slots (%d short) holds %d entries, threshold %d",
			t.n, t.size, t.short, total, t.growAt)
	}
	return nil
}

// checkTable is what checkBuckets reads of a table of either type.
type checkTable[K comparable, V any] interface {
	visited[K, V]
	hashOf(k K) uint64
}

// checkBuckets checks every bucket of t: every key sits in one of its
// candidates under the tag of its hash, once (seen records where each key
// was found); no slot past the bucket's capacity is used; every empty
// slot of the current table ("cur", "cache") is zeroed; every control byte
// is empty or full with a tag; no bucket lock is held. slot, if not nil,
// checks a slot's metadata. It returns the number of entries.
func checkBuckets[K comparable, V any](t checkTable[K, V], capMask uint64, name string, seen map[K]string, slot func(i uint64, j int, full bool) error) (int64, error) {
	var c [hashfn.MaxChoices]uint64
	g := t.geom()
	n := int64(0)
	for i := range g.n {
		b := t.bucket(i)
		if w := b.sync.v.Load(); w&(readerMask|writerBit) != 0 {
			return 0, fmt.Errorf("%s bucket %d: lock held (word %#x)", name, i, w)
		}
		cw := ctrl(b.ctrl.Load())
		cm := capMask
		if ct, ok := t.(interface{ capAt(uint64) uint64 }); ok {
			cm = ct.capAt(i)
		}
		if inUse := cm >> 7 * 0xff; uint64(cw)&^inUse != 0 { // every byte of the first BucketSize
			return 0, fmt.Errorf("%s bucket %d: control word %#x uses slots past its %d", name, i, uint64(cw), slotsOf(cm))
		}
		for j := range slotsPerBucket {
			cb := uint8(uint64(cw) >> (8 * j))
			sl := &b.slots[j]
			if cb == emptyFresh || cb == emptyUsed {
				// The old table keeps the slots it moved (grow.go's
				// mover); the current one zeroes what it empties.
				if name != "old" && !reflect.ValueOf(sl).Elem().IsZero() {
					return 0, fmt.Errorf("%s bucket %d slot %d: empty but not zeroed", name, i, j)
				}
				if slot != nil {
					if err := slot(i, j, false); err != nil {
						return 0, err
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
			if slot != nil {
				if err := slot(i, j, true); err != nil {
					return 0, err
				}
			}
			h := t.hashOf(sl.key)
			if tagOf(h) != cb {
				return 0, fmt.Errorf("%s bucket %d slot %d: key %v has tag %#x, control byte %#x", name, i, j, sl.key, tagOf(h), cb)
			}
			ok := false
			for _, ci := range g.candidates(h, &c) {
				ok = ok || ci == i
			}
			if !ok {
				return 0, fmt.Errorf("%s bucket %d: key %v is not in a candidate (candidates %v)", name, i, sl.key, c[:g.d])
			}
			if where, dup := seen[sl.key]; dup {
				return 0, fmt.Errorf("key %v twice: %s and %s bucket %d", sl.key, where, name, i)
			}
			seen[sl.key] = fmt.Sprintf("%s bucket %d", name, i)
			n++
		}
	}
	return n, nil
}

// checkStash checks a map's table's stash and stash hints, given the n
// entries checkBuckets found in its buckets, and its entry count; it
// returns the entries in all.
func (t *table[K, V]) checkStash(name string, seen map[K]string, n int64) (int64, error) {
	var c [hashfn.MaxChoices]uint64
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
	if got := t.entries.Load(); got != n {
		return 0, fmt.Errorf("%s table counts %d entries, holds %d", name, got, n)
	}
	return n, nil
}

// The checker must be able to fail: break a store in each way it checks.
func TestInvariantCheckerCatchesCorruption(t *testing.T) {
	build := func() *Map[string, int] {
		s, err := NewMap[string, int](MapOptions{Seed: 7, BucketSize: 2, Choices: 2})
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
	fullSlot := func(s *Map[string, int]) (bref[string, int], int) {
		t := s.tabs.Load().cur
		for i := range t.n {
			if m := ctrl(t.bucket(i).ctrl.Load()).full(); m != 0 {
				return t.bucket(i), slotOf(m)
			}
		}
		panic("no full slot")
	}
	for name, breakIt := range map[string]func(s *Map[string, int]){
		"wrong tag": func(s *Map[string, int]) {
			b, j := fullSlot(s)
			b.ctrl.Store(uint64(ctrl(b.ctrl.Load()).withSlot(j, tagOf(s.hash(b.slots[j].key))^1)))
		},
		"wrong bucket": func(s *Map[string, int]) {
			b, j := fullSlot(s)
			b.slots[j].key = "not placed here"
			b.ctrl.Store(uint64(ctrl(b.ctrl.Load()).withSlot(j, tagOf(s.hash("not placed here")))))
		},
		"count":     func(s *Map[string, int]) { s.count.Add(1) },
		"lock held": func(s *Map[string, int]) { b, _ := fullSlot(s); b.sync.rlock() },
		"stale slot": func(s *Map[string, int]) {
			b, j := fullSlot(s)
			b.ctrl.Store(uint64(ctrl(b.ctrl.Load()).withSlot(j, 0)))
		},
		"stash hint":   func(s *Map[string, int]) { b, _ := fullSlot(s); b.sync.addHint(1) },
		"past the end": func(s *Map[string, int]) { b, _ := fullSlot(s); b.ctrl.Store(b.ctrl.Load() | 0x80<<56) },
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
