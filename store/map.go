package store

import (
	"reflect"
	"sync"
	"sync/atomic"
)

// Map is an unbounded concurrent key-value map on a bucketed
// balanced-allocation table that grows as keys arrive. Its methods are
// safe for concurrent use by any number of goroutines. See the package
// documentation for how it works.
type Map[K comparable, V any] struct {
	// cfg is resolved: no zero fields. Its Hash and Seed are those NewMap
	// started with; the tables carry the function in use, which a flood
	// changes (flood.go), and Options reports that one.
	cfg config

	// tabs is the current table and, while the table grows or re-keys,
	// the old one. Readers load it once per lookup; writers replace it
	// under mu.
	tabs atomic.Pointer[tables[K, V]]

	lay wordLayout // how slots are read: optimistically or under a lock

	// closed > 0: the writers' gate is closed, and they take the
	// serialized path under mu (gate.go).
	closed atomic.Int32

	// strKeys: K is a string kind, whose bytes a growth fetches for a
	// batch of keys before hashing them (mover.flush).
	strKeys bool

	tot  counters // hits and misses, striped; padded on both sides
	mono monotone // the highest figures Stats returned (counters.go)

	// mu serializes the writers that take the serialized path (while the
	// gate is closed, and for what the fast path hands over) and guards
	// the fields below. Get never takes it.
	mu   sync.Mutex
	next int // during a growth: visits to old buckets made (see movePasses)
	// During a growth: the keys of the old stash when it began, to move
	// (grow), and how many of them the move has visited.
	moving []slot[K, V]
	snext  int
	step   int          // during a growth: old buckets to move per write
	pins   int          // visitors (All, Report, Save) that need the table not to grow
	prep   *table[K, V] // the next table, being allocated (chunk.go)
	prepTo int64        // the most entries for which growTo still picks prep's size

	// moveHold: a move (growth or re-key) keeps the gate closed.
	moveHold bool

	grows uint64
	flood floodState[K] // how the map answers colliding keys (flood.go)

	view   atomic.Pointer[cowView[K, V]] // the snapshot being taken, if any (cow.go)
	saveMu sync.Mutex                    // one Save at a time

	count atomic.Int64 // entries, in both tables; atomic so Len needs no lock
}

// tables is what a lookup needs to see at one instant: the current table
// and, during a growth, the old one. It is replaced, never changed.
// rehash says the two hash keys differently (a re-key, flood.go): a
// lookup in old then needs the key's hash under old's function.
type tables[K comparable, V any] struct {
	cur, old *table[K, V]
	rehash   bool
}

// oldHash returns k's hash in st.old, given its hash h in st.cur.
func (st *tables[K, V]) oldHash(k K, h uint64) uint64 {
	if st.rehash {
		return st.old.hash(k)
	}
	return h
}

// hash returns k's hash under the current table's function, for the paths
// that are not hot: the hot ones hash through the table they load.
func (s *Map[K, V]) hash(k K) uint64 { return s.tabs.Load().cur.hash(k) }

// NewMap returns an empty map. The zero MapOptions means the defaults;
// options that cannot be used get an error wrapping ErrOptions, never a
// panic.
//
// Keys of a string kind, of an integer kind or arrays of bytes are hashed
// by the chosen family without allocating. Other comparable key types
// (structs, floats, pointers, interfaces) are first hashed with
// hash/maphash.Comparable under a per-process seed and then by the family:
// still seeded by the options' Seed, but reproducible only within one
// process (such a map cannot be saved), and an interface key whose dynamic
// type is not comparable panics as it would in a Go map.
func NewMap[K comparable, V any](o MapOptions) (*Map[K, V], error) {
	c, err := o.resolve()
	if err != nil {
		return nil, err
	}
	return newMap[K, V](c), nil
}

// newMap returns an empty map of resolved options c.
func newMap[K comparable, V any](c config) *Map[K, V] {
	s := &Map[K, V]{cfg: c, lay: slotLayout[K, V]()}
	s.strKeys = optimisticReads && shapeOf(reflect.TypeFor[K]()) == shapeString
	s.tabs.Store(&tables[K, V]{cur: s.emptyTable()})
	return s
}

// emptyTable returns the table NewMap starts with: the first table on the
// growth path that holds MapOptions.SizeHint keys (the smallest one, with
// no hint). It hashes as the current table does (a Clear keeps the
// function a flood made the map move to), or by the options before the
// first.
func (s *Map[K, V]) emptyTable() *table[K, V] {
	n := tableFor(&s.cfg, uint64(s.cfg.SizeHint))
	if st := s.tabs.Load(); st != nil {
		return newTableFn[K, V](&s.cfg, n, s.lay, true, st.cur.hasher)
	}
	return newTable[K, V](&s.cfg, n, s.lay, true)
}

// Options returns the options in use: defaults filled in, and the hash
// family and seed in use: the seed drawn when MapOptions.Seed was 0, or
// the ones a flood made the map move to (see "Hash flooding" in the
// package documentation).
func (s *Map[K, V]) Options() MapOptions {
	c := s.configOf(s.tabs.Load().cur)
	return c.mapOptions()
}

// configOf returns the map's options with t's hash family and seed.
func (s *Map[K, V]) configOf(t *table[K, V]) config {
	o := s.cfg
	o.Hash, o.Seed = t.fn.Kind(), t.fn.Seed()
	return o
}

// Seed returns the seed of the map's hash function in use.
func (s *Map[K, V]) Seed() uint64 { return s.tabs.Load().cur.fn.Seed() }

// Get returns the value stored for k and whether there is one.
//
// It takes no lock and writes to no shared cache line: it checks the tags
// of k's candidates and reads the matching slots optimistically, checking
// each bucket's version before and after (for slot types that cannot be
// read that way, it takes the read lock of a bucket where a tag matches);
// it counts the hit or miss in a counter stripe of its own goroutine.
func (s *Map[K, V]) Get(k K) (V, bool) {
	hint := stripeHint()
	st := s.tabs.Load()
	h := st.cur.hash(k)
	if !optimisticReads {
		hint = h
	}
	for {
		tag := tagOf(h)
		if st.old != nil {
			ho := st.oldHash(k, h)
			if v, ok := st.old.get(k, ho, tagOf(ho)); ok {
				s.tot.hit(hint)
				return v, true
			}
		}
		// st.cur.get written out: get does not fit the inlining budget,
		// and this saves a call on every Get (the old table's rarer
		// lookups above keep the call).
		var v V
		var ok bool
		if t := st.cur; t.d == 2 {
			v, ok = t.get2(k, h, tag)
		} else {
			v, ok = t.getD(k, h, tag)
		}
		if ok {
			s.tot.hit(hint)
			return v, true
		}
		// Keys move from the old table to the new one; if the tables
		// changed while we looked, k may have moved past us: look again,
		// under the new current table's hash if it has another.
		now := s.tabs.Load()
		if now == st {
			s.tot.miss(hint)
			return v, false
		}
		if now.cur != st.cur {
			h = now.cur.hash(k)
		}
		st = now
	}
}

// Set stores v for k, replacing any value k had.
//
// While no growth, re-key or Save is under way, it holds only k's buckets:
// the one that holds k, for an update, or k's candidates, for an insert
// (fastpath.go), so Sets of different keys run in parallel. Otherwise, and
// for a key that goes to or comes from the stash, it takes the map's
// mutex (gate.go).
func (s *Map[K, V]) Set(k K, v V) {
	hint := stripeHint()
	if s.enter(hint) {
		t := s.tabs.Load().cur // the gate is open: no move is under way
		h := t.hash(k)
		_, r := t.setFast(k, v, h, tagOf(h), false)
		s.leave(hint)
		if r == fastUpdated {
			// The common case, counted here: counted's call and
			// switch cost an update a tenth of its instructions.
			s.tot.stripe(hint).updates.Add(1)
			return
		}
		if r != fastSlow {
			s.counted(hint, r, t)
			return
		}
	}
	s.mu.Lock()
	s.closeGate()
	t0 := s.tabs.Load().cur
	h := t0.hash(k)
	tag := tagOf(h)
	st, h, tag := s.writeTables(t0, k, h, tag)
	r := fastUpdated
	if !st.cur.set(k, v, h, tag) {
		s.insertNew(st, k, v, h, tag)
		r = fastInserted
	}
	s.countWrite(hint, r)
	s.openGate()
	s.mu.Unlock()
}

// counted counts a fast write that changed the map (r is fastUpdated,
// fastInserted or fastDeleted), and after an insert grows the table or
// prepares its next one when its entries call for it.
func (s *Map[K, V]) counted(hint uint64, r fastResult, t *table[K, V]) {
	s.countWrite(hint, r)
	if r == fastInserted && t.entries.Load() >= t.prepAt {
		s.mu.Lock()
		if st := s.tabs.Load(); st.cur == t && st.old == nil {
			if s.pins == 0 && t.needsGrowth() {
				s.grow(t)
			} else {
				s.prepare(t)
			}
		}
		s.mu.Unlock()
	}
}

// inserted returns the number of keys inserted so far (the Sets that
// added a key, counted in the stripes).
func (s *Map[K, V]) inserted() int64 {
	var n uint64
	for i := range s.tot.stripes {
		n += s.tot.stripes[i].fills.Load()
	}
	return int64(n)
}

// countWrite counts a write in the stripes and in Len.
func (s *Map[K, V]) countWrite(hint uint64, r fastResult) {
	st := s.tot.stripe(hint)
	switch r {
	case fastUpdated:
		st.updates.Add(1)
	case fastInserted:
		st.fills.Add(1)
		s.count.Add(1)
	case fastDeleted:
		st.deletes.Add(1)
		s.count.Add(-1)
	}
}

// GetOrSet returns the value stored for k and true if there is one;
// otherwise it stores v for k, as Set would, and returns v and false. The
// look and the store are one step: of many goroutines that call GetOrSet
// on the same absent key at once, one stores its value and all the others
// get that value back (sync.Map's LoadOrStore). It is counted as a Get
// (hit or miss) and, when it stores, as a Set.
//
// Most calls find their key (a map filled on first use), so GetOrSet first
// looks as Get does, taking no lock and writing no shared line: a key
// found in the current table with no move under way is there, and its
// value is the answer. Only a key not found that way is looked for again
// under its candidates' locks, and stored if absent. A GetOrSet that
// finds its key so costs about a Get, where the look under the locks took
// the gate's two atomic adds and a bucket lock, whose line the hot keys'
// readers then passed between cores (BenchmarkGetOrSetRatio).
func (s *Map[K, V]) GetOrSet(k K, v V) (V, bool) {
	hint := stripeHint()
	st := s.tabs.Load()
	t := st.cur // h is k's hash in t
	h := t.hash(k)
	if st.old == nil {
		if old, ok := t.get(k, h, tagOf(h)); ok {
			s.tot.hit(hint)
			return old, true
		}
	}
	if s.enter(hint) {
		if cur := s.tabs.Load().cur; cur != t {
			if cur.fn != t.fn {
				h = cur.hash(k) // a re-key came in between
			}
			t = cur
		}
		old, r := t.setFast(k, v, h, tagOf(h), true)
		s.leave(hint)
		switch r {
		case fastUpdated:
			s.tot.hit(hint)
			return old, true
		case fastInserted:
			s.tot.miss(hint)
			s.counted(hint, r, t)
			return v, false
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeGate()
	defer s.openGate()
	st, h, tag := s.writeTables(t, k, h, tagOf(h))
	if old, ok := st.cur.getLocked(k, h, tag); ok {
		s.tot.hit(hint)
		return old, true
	}
	s.insertNew(st, k, v, h, tag)
	s.countWrite(hint, fastInserted)
	s.tot.miss(hint)
	return v, false
}

// writeTables readies the tables for a write of k to the current one:
// during a growth it moves k out of the old table, and while a Save runs
// it copies k's candidates for the snapshot first. h and tag are k's hash
// and tag in t0, the current table when the caller hashed k, before it
// took s.mu; writeTables returns the tables and k's hash and tag in their
// current one, which a re-key that started meanwhile changes. The caller
// holds s.mu.
func (s *Map[K, V]) writeTables(t0 *table[K, V], k K, h uint64, tag uint8) (*tables[K, V], uint64, uint8) {
	st := s.tabs.Load()
	if st.cur != t0 && st.cur.fn != t0.fn {
		h = st.cur.hash(k)
		tag = tagOf(h)
	}
	// Start loading the key's candidates now, so that their cache misses
	// overlap with one another and, during a growth, with the moving work
	// that migrateFor does first, instead of following it.
	st.cur.prefetchCandidates(h)
	if st.old != nil {
		st = s.migrateFor(st, k, h)
	}
	if s.view.Load() != nil {
		s.cowTouch(st.cur, h)
	}
	return st, h, tag
}

// insertNew inserts k, which the current table of st does not hold, and
// grows the table or prepares its next one as needed. The caller holds
// s.mu.
func (s *Map[K, V]) insertNew(st *tables[K, V], k K, v V, h uint64, tag uint8) {
	t := st.cur
	t.insert(k, v, h, tag)
	if st.old == nil {
		switch {
		case s.pins == 0 && t.needsGrowth():
			s.grow(t)
		case s.flooded(t) && s.flood.allowed(s.inserted()):
			s.rekey(t)
		default:
			s.prepare(t)
		}
	}
}

// Delete removes k and reports whether it was there. Like Set, it holds
// only the bucket that holds k while the gate is open (gate.go).
func (s *Map[K, V]) Delete(k K) bool {
	hint := stripeHint()
	if s.enter(hint) {
		t := s.tabs.Load().cur
		h := t.hash(k)
		r := t.deleteFast(k, h, tagOf(h))
		s.leave(hint)
		switch r {
		case fastDeleted:
			s.countWrite(hint, r)
			return true
		case fastAbsent:
			return false
		}
	}
	s.mu.Lock()
	s.closeGate()
	t0 := s.tabs.Load().cur
	h := t0.hash(k)
	tag := tagOf(h)
	st := s.tabs.Load()
	if st.old != nil {
		st = s.migrateFor(st, k, h)
	}
	if s.view.Load() != nil {
		s.cowTouch(st.cur, h)
	}
	deleted := st.cur.delete(k, h, tag)
	if deleted {
		s.countWrite(hint, fastDeleted)
	}
	s.openGate()
	s.mu.Unlock()
	return deleted
}

// Len returns the number of entries.
func (s *Map[K, V]) Len() int { return int(s.count.Load()) }

// Clear removes every entry and shrinks the table back to its initial
// size (the one MapOptions.SizeHint asks for). Counters (Stats) keep
// counting across a Clear.
func (s *Map[K, V]) Clear() {
	s.mu.Lock()
	s.closeGate()
	s.tabs.Store(&tables[K, V]{cur: s.emptyTable()})
	s.count.Store(0)
	s.next, s.step = 0, 0
	s.moving, s.snext = nil, 0
	s.prep = nil
	s.flood.pending = nil
	if s.moveHold {
		s.moveHold = false
		s.openGate()
	}
	s.openGate()
	s.mu.Unlock()
}

// pin finishes any growth under way and keeps the table from growing until
// unpin, so that a visitor walking it bucket by bucket sees every key that
// stays in the store exactly once. It moves the remaining old buckets in
// batches of pinBatch, releasing the writers' lock between batches, so
// writers wait at most for one batch. While pinned, keys that find their
// candidates full go to the stash; the table grows at the first Set of a
// new key after unpin (updates and deletes do not grow a table).
func (s *Map[K, V]) pin() *table[K, V] {
	for {
		s.mu.Lock()
		st := s.tabs.Load()
		if st.old == nil {
			s.pins++
			s.mu.Unlock()
			return st.cur
		}
		s.advance(st, pinBatch)
		s.mu.Unlock()
	}
}

// pinBatch is the number of old buckets pin moves per hold of the lock.
const pinBatch = 64

func (s *Map[K, V]) unpin() {
	s.mu.Lock()
	s.pins--
	s.mu.Unlock()
}
