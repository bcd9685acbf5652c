package store

import (
	"math"
	"math/bits"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
)

// Growth.
//
// A table grows when its entries pass maxUtilization × n × BucketSize (a
// stash past stashBound is answered by a re-key instead: flood.go). The
// new table has about MapOptions.Growth times as many buckets (rounded up
// to a size the rule accepts, see sizeAtLeast; more when a pin left it far
// past its threshold, see growTo), and the keys move to it incrementally:
// every write moves the old slots that may hold its key, if any (and its
// key, if it is in the old stash), plus s.step more visits to the old
// stash's keys and then to old buckets (at least minStep; see movePasses
// for the order), so no caller ever waits for a whole rehash, and the move
// is done well before the new table can fill up. While keys move, a lookup
// checks the old table first and then the new one: keys only ever move
// forward (copied to the new table, then cleared from the old one), so a
// key present throughout is always found, and a miss is believed only if
// the pair of tables did not change while it looked.

// The growth factor is MapOptions.Growth, 2 by default, as a Go map and a
// Swiss table grow. A smaller factor, such as 3/2, leaves a freshly grown
// table two thirds full instead of half and so a leaner heap, at the price
// of moving each key about twice over the life of a growing map instead of
// once (BenchmarkGrowthFactor measures both). Sizes are computed in
// integers, with the factor in 1024ths (growthOf).
const growthDen = 1024

// growthOf returns o's growth factor in 1024ths (times growthDen); 0,
// which resolve replaces, counts as DefaultGrowth. Sizes stay far from
// overflow: at most hashfn.MaxBuckets (2^32) times 4096.
func growthOf(o *config) uint64 {
	g := o.Growth
	if g == 0 {
		g = DefaultGrowth
	}
	// Rounded to the nearest 1024th by adding a half (g > 0).
	return uint64(g*growthDen + 0.5)
}

// minStep is the fewest visits to old buckets a write makes during a
// growth (see movePasses): about 4 buckets' worth of keys, up to 32, a few
// microseconds of work.
const minStep = 4 * movePasses

// initialBuckets is the size of an empty store's table per choice.
const initialBuckets = 4

// overflowTarget is the fraction of keys that may overflow into the stash,
// by the fluid limit, when a table reaches its utilization threshold.
const overflowTarget = 1e-4

// maxUtilization returns the utilization u = m / (n·C) at which a table
// grows: the largest u, in steps of 0.05, at which the fluid limit says at
// most overflowTarget of the keys find all their candidates full. For
// C = 8 the fluid limit's overflow fractions (docs/theory.md) are
//
//	rule, d          u = 0.70   0.75     0.80     0.85     0.90    threshold
//	one choice       0.040      0.052    0.067    0.083    0.101   0.20 (fluid)
//	d-choice, 2      2.2e-7     1.1e-5   1.9e-4   1.5e-3   6.8e-3  0.75
//	go-left, 2       3.0e-10    3.5e-7   3.5e-5   7.1e-4   4.9e-3  0.80
//	go-left, 4       ~0         4e-139   1.6e-49  2.8e-18  1.8e-7  0.90
//
// and the table below holds the same rule applied to every rule, d and C,
// computed with the fluid solver (package bucket/fluid;
// TestThresholdsFollowFluidLimit recomputes it). Halves and double hashing
// share d-choice's fluid limit. With one choice the threshold is low (0.20
// for C = 8): that is the theory's point, not a tuning accident. With
// d = 1 both tables hold the one-choice figures.
func maxUtilization(rule bucket.Placement, d, c int) float64 {
	if rule == bucket.GoLeft {
		return goLeftUtil[d-1][c-1]
	}
	return dChoiceUtil[d-1][c-1]
}

// Rows are d = 1…8, columns C = 1…8.
var (
	dChoiceUtil = [hashfn.MaxChoices][slotsPerBucket]float64{
		{0.05, 0.05, 0.05, 0.05, 0.10, 0.15, 0.20, 0.20},
		{0.05, 0.20, 0.40, 0.55, 0.60, 0.70, 0.75, 0.75},
		{0.05, 0.40, 0.60, 0.70, 0.75, 0.80, 0.85, 0.85},
		{0.10, 0.50, 0.70, 0.75, 0.80, 0.85, 0.85, 0.90},
		{0.20, 0.60, 0.75, 0.80, 0.85, 0.85, 0.90, 0.90},
		{0.25, 0.65, 0.75, 0.85, 0.85, 0.90, 0.90, 0.90},
		{0.35, 0.70, 0.80, 0.85, 0.85, 0.90, 0.90, 0.90},
		{0.40, 0.70, 0.80, 0.85, 0.90, 0.90, 0.90, 0.90},
	}
	goLeftUtil = [hashfn.MaxChoices][slotsPerBucket]float64{
		{0.05, 0.05, 0.05, 0.05, 0.10, 0.15, 0.20, 0.20},
		{0.05, 0.30, 0.45, 0.60, 0.65, 0.70, 0.75, 0.80},
		{0.20, 0.55, 0.70, 0.75, 0.80, 0.85, 0.85, 0.90},
		{0.35, 0.65, 0.75, 0.85, 0.85, 0.90, 0.90, 0.90},
		{0.45, 0.75, 0.80, 0.85, 0.90, 0.90, 0.90, 0.90},
		{0.55, 0.80, 0.85, 0.90, 0.90, 0.90, 0.95, 0.95},
		{0.60, 0.80, 0.85, 0.90, 0.90, 0.95, 0.95, 0.95},
		{0.65, 0.85, 0.90, 0.90, 0.90, 0.95, 0.95, 0.95},
	}
)

// thresholds returns the entry count past which a table of n buckets
// grows, and the stash size past which its keys are taken to collide
// (flooded). The stash bound, 16 + slots/4096, is a few times what
// overflowTarget predicts at the threshold: the stash only fills past it
// when keys spread worse than the theory says (a poor hash family on
// structured keys, or keys built to collide), and then the store re-keys
// the table, where growing would not separate keys whose hashes collide.
func thresholds(o *config, n uint64) (maxEntries int64, stashBound int) {
	slots := n * uint64(o.BucketSize)
	u := maxUtilization(o.Placement, o.Choices, o.BucketSize)
	return int64(u * float64(slots)), 16 + int(slots>>12)
}

// sizeAtLeast returns the smallest table size ≥ n that the rule accepts:
// a multiple of d for rules with parts (so the parts are equal), a prime or
// a power of two for double hashing (so the d candidates never repeat),
// anything for the others; never more than hashfn.MaxBuckets.
func sizeAtLeast(o *config, n uint64) uint64 {
	d := uint64(o.Choices)
	n = max(n, d)
	switch o.Placement.Scheme() {
	case hashfn.Parts:
		n = (n + d - 1) / d * d
	case hashfn.Double:
		if n&(n-1) != 0 {
			n = hashfn.PrimeAtLeast(n)
		}
	}
	return min(n, hashfn.MaxBuckets)
}

// tableFor returns the size of the table a store reaches as entries keys
// are set into it from empty: the first size on the growth path whose
// threshold holds them. New starts an unbounded store at tableFor its
// SizeHint, and a sparse restore at tableFor the snapshot's entries.
func tableFor(o *config, entries uint64) uint64 {
	n := sizeAtLeast(o, initialBuckets*uint64(o.Choices))
	for {
		maxE, _ := thresholds(o, n)
		next := nextSize(o, n)
		if uint64(maxE) >= entries || next == n {
			return n
		}
		n = next
	}
}

// nextSize returns the size a table of n buckets grows to, or n when it
// cannot grow (at hashfn.MaxBuckets: then the stash takes the overflow).
func nextSize(o *config, n uint64) uint64 {
	if n >= hashfn.MaxBuckets {
		return n
	}
	next := sizeAtLeast(o, (n*growthOf(o)+growthDen-1)/growthDen)
	if next > hashfn.MaxBuckets || next <= n {
		return n
	}
	return next
}

// growTo returns the size a table of n buckets that holds entries keys
// grows to: nextSize, one step of the growth factor, unless the table is
// so far past its threshold that one step would leave the new table past
// its own, as after All or Save kept it from growing while keys poured
// into the stash. Then it is the first size on the growth path at which
// the entries fill 1/Growth of the threshold (a half by default), as after
// one step from the threshold: one growth takes the table where it needs
// to be, where single steps would take one growth per Set of a new key,
// each moving the whole stash again.
func growTo(o *config, n uint64, entries int64) uint64 {
	next := nextSize(o, n)
	maxE, _ := thresholds(o, next)
	if maxE >= entries {
		return next
	}
	for {
		after := nextSize(o, next)
		if growthDen*maxE >= int64(growthOf(o))*entries || after == next {
			return next
		}
		next = after
		maxE, _ = thresholds(o, next)
	}
}

// growLimit returns the most entries for which growTo(o, n, entries)
// returns next, a size growTo returned for n: the next size's own
// threshold, or, further along the growth path, the entries that fill two
// thirds of next's threshold (no limit at the largest size).
func growLimit(o *config, n, next uint64) int64 {
	maxE, _ := thresholds(o, next)
	switch {
	case nextSize(o, next) == next:
		return math.MaxInt64
	case next == nextSize(o, n):
		return maxE
	}
	return growthDen * maxE / int64(growthOf(o))
}

// needsGrowth reports whether t's entries have passed its threshold. A
// stash past its bound is not a reason to grow: keys that collide collide
// in any table, and the store answers them by re-keying instead
// (flood.go).
func (t *table[K, V]) needsGrowth() bool {
	return t.entries.Load() > t.maxEntries
}

// grow starts moving the keys of the current table t into a bigger one.
// The caller holds s.mu and no growth is under way.
func (s *Map[K, V]) grow(t *table[K, V]) {
	n := uint64(int(t.n))
	next := growTo(&s.cfg, n, t.entries.Load())
	if next == n {
		return
	}
	nt := s.prep
	if nt == nil || nt.n != next || nt.fn != s.nextHasher(t).fn {
		// Not prepared: the table passed its threshold within one
		// insert of being short of the prepare window, which only a
		// tiny table does, or a re-key changed what to prepare.
		nt = newTableFn[K, V](&s.cfg, next, s.lay, false, s.nextHasher(t))
	}
	s.startMove(t, nt)
}

// startMove makes nt the current table and starts moving t's keys into
// it: a growth, a re-key (nt hashes differently, flood.go), or both. The
// caller holds s.mu and no move is under way.
func (s *Map[K, V]) startMove(t, nt *table[K, V]) {
	n := t.n
	nt.allocRest()
	s.prep = nil
	// The move holds the writers' gate closed until it ends (advance):
	// keys move between the tables under the serialized path.
	s.closeGate()
	s.moveHold = true
	rehash := nt.fn != t.fn
	s.tabs.Store(&tables[K, V]{cur: nt, old: t, rehash: rehash})
	if rehash {
		s.rekeyStarted(t, nt)
	}
	s.next = 0
	// The old stash moves with the buckets, a few keys per write: after
	// All or Save kept the table from growing it may hold most of the
	// keys, and moving them all here made this one Set wait for them
	// (85 ms for 200,000 keys). A key stays in the old stash until it is
	// moved: copied to the new table, then removed, so a lookup finds it
	// in one or the other (see moveStashed). The list of keys to move is
	// a copy, taken now: no key joins the old stash during the move.
	//
	// The old table's stash hints stay as they are: they still cover every
	// key left in its stash, and the table goes when the move ends.
	// Lowering them key by key needed each key's hash again, and a key
	// that is not equal to itself (a float NaN, which, as in a Go map,
	// hashes at random each time and is never found) then lowered a
	// random bucket's hint: the real keys stashed under that bucket were
	// hidden from lookups. Such a key cannot be deleted from a Go map
	// either: those are moved now, and the old stash rebuilt without them.
	s.moving, s.snext = t.stash.entries(), 0
	nans := 0
	for x := range s.moving {
		if e := &s.moving[x]; e.key != e.key {
			h := nt.hash(e.key)
			nt.insert(e.key, e.val, h, tagOf(h))
			nans++
		} else if nans > 0 {
			s.moving[x-nans] = *e
		}
	}
	if nans > 0 {
		clear(s.moving[len(s.moving)-nans:])
		s.moving = s.moving[:len(s.moving)-nans]
		t.stash.reset(s.moving)
		t.entries.Add(-int64(nans))
	}
	// Enough visits (to old buckets or stashed keys) per write that the
	// move ends before the new table can reach its own threshold, even if
	// every write adds a key; and at least minStep, so that the move is
	// over soon (while it lasts, a write also checks the old table, and
	// both tables take memory).
	visits := movePasses*int64(n) + int64(len(s.moving))
	room := max(nt.maxEntries-t.entries.Load()-nt.entries.Load(), 1)
	s.step = max(int((visits+room-1)/room)+1, minStep)
	if nt.n > n {
		s.grows++
	}
}

// The move visits every old bucket movePasses times, in bucket order; in
// pass p it moves the keys whose tag's low passBits bits equal p (the last
// pass moves whatever is left). Visit x is bucket x mod n in pass x / n.
//
// Why not each bucket whole, in one pass: the fluid limit, and with it all
// that the load report compares against, describes keys that arrive in
// random order. The keys of one old bucket share their candidate there, so
// they share a candidate region of the new table too; moved together, they
// reach it in one burst, and the greedy rule packs them differently than
// keys that arrive one at a time. Measured at 1M keys under go-left, moving
// whole buckets leaves 20% of the buckets at load ≥ 6 against the theory's
// 15.5%, 60 standard deviations off, with more keys overflowing (and
// visiting the buckets in a scattered order instead does not help). Split
// over 8 passes by tag, the bursts are gone and the grown table matches
// the fluid limit as a freshly filled one does, within 3 standard
// deviations at every load (TestGrownTableFollowsFluidLimit); 4 passes
// still leave 10. The tag is in the control word, so choosing a pass's keys
// costs no hashing; the price is 8 reads of each old control word, in
// order, where the prefetcher hides them.
const (
	passBits   = 3
	movePasses = 1 << passBits
)

// moveOrder returns the old bucket of visit x.
func (s *Map[K, V]) moveOrder(x int) uint64 {
	return uint64(x % int(s.tabs.Load().old.n))
}

// passMask returns the full slots of c that pass p moves: those whose
// tag's low bits equal p, or all that are left in the last pass.
func passMask(c ctrl, p int) uint64 {
	if p >= movePasses-1 {
		return c.full()
	}
	v := uint64(c) ^ lsbs*uint64(p)
	low := v & (lsbs * (movePasses - 1))
	// Fold each byte's low bits into its bit 0: set where they differ from p.
	differ := low
	for sh := 1; sh < passBits; sh++ {
		differ |= low >> sh
	}
	differ &= lsbs
	return c.full() &^ (differ << 7)
}

// migrateFor, during a growth or re-key, makes sure key k (hash h in the
// new table) is not left in the old table (it moves the old slots whose
// tag matches the key's there, and k if it is in the old stash), then
// makes s.step more visits, and ends the move when none are left. The caller holds s.mu. It returns
// the tables as they are afterwards.
func (s *Map[K, V]) migrateFor(st *tables[K, V], k K, h uint64) *tables[K, V] {
	var (
		c  [hashfn.MaxChoices]uint64
		mv mover[K, V]
	)
	ho := st.oldHash(k, h)
	tag := tagOf(ho)
	cs := st.old.cands(ho, &c)
	for _, i := range cs {
		if m := ctrl(st.old.bucket(i).ctrl.Load()).match(tag); m != 0 {
			mv.take(s, st, i, m)
		}
	}
	mv.flush(s, st)
	// The stash is moved first, usually within the first write; while it
	// lasts, the old table's hints, never lowered during the move (grow),
	// tell whether k may be in it.
	if s.snext < len(s.moving) && st.old.bucket(cs[0]).sync.hint() != 0 {
		s.moveStashed(st, k)
	}
	return s.advance(st, s.step)
}

// moveStashed moves k from the old stash to the new table, if it is
// still in the old stash: copied first, then removed, so that a lookup
// finds it in one or the other. The caller holds s.mu.
func (s *Map[K, V]) moveStashed(st *tables[K, V], k K) {
	v, ok := st.old.stash.peek(k)
	if !ok {
		return // moved already, by a write of k
	}
	h := st.cur.hash(k)
	st.cur.insert(k, v, h, tagOf(h))
	st.old.stash.remove(k)
	st.old.entries.Add(-1)
}

// advance makes up to k more visits and ends the growth if that was the
// last of them. The caller holds s.mu.
func (s *Map[K, V]) advance(st *tables[K, V], k int) *tables[K, V] {
	var mv mover[K, V]
	n := int(st.old.n)
	visits := movePasses * n
	// Prefetch the buckets that the next call will visit, so that they
	// are in the cache when it comes. The visits read the old table in
	// order, but a few buckets per write, between random accesses
	// elsewhere: the hardware prefetcher does not keep up, and unprefetched,
	// loading the old control words and slots is most of advance's and
	// take's time (BenchmarkSetGrowingRatio).
	for x, end := s.next+k, min(s.next+2*k, visits); x < end; {
		lo := uint64(x % n)
		hi := min(lo+uint64(end-x), uint64(n), (lo/chunkSize+1)*chunkSize)
		prefetchBuckets(st.old, lo, hi)
		x += int(hi - lo)
	}
	// The old stash's keys first, one visit each.
	for ; k > 0 && s.snext < len(s.moving); k-- {
		s.moveStashed(st, s.moving[s.snext].key)
		s.snext++
	}
	pass, i := s.next/n, uint64(s.next%n) // s.next = pass·n + i (moveOrder)
	for ; k > 0 && s.next < visits; k-- {
		b := st.old.bucket(i)
		if m := passMask(ctrl(b.ctrl.Load()), pass); m != 0 {
			mv.take(s, st, i, m)
		}
		s.next++
		if i++; i == uint64(n) {
			pass, i = pass+1, 0
		}
	}
	mv.flush(s, st)
	if s.next < visits || s.snext < len(s.moving) {
		return st
	}
	s.moving, s.snext = nil, 0
	done := &tables[K, V]{cur: st.cur}
	s.tabs.Store(done)
	if s.moveHold {
		s.moveHold = false
		s.openGate()
	}
	return done
}

// moveBatch is the most keys a mover holds. The bigger the batch, the more
// company its keys' cache misses (string bytes, candidates) have to
// overlap with. With batches of 32 rather than 8 and the key bytes
// fetched before hashing (flush), a growing map's Set of 2M keys takes
// 1.7-2.3x the Go map's time rather than 2.5x (BenchmarkSetGrowingPaired,
// two runs each on a noisy machine); at 10M keys (bench/storebench's
// BenchmarkSetGrowingRatio) the difference is within the noise.
const moveBatch = 32

// mover moves keys from old buckets to the new table in batches of up to
// moveBatch: it hashes them all before inserting any, so the CPU fetches
// their (string) bytes in parallel instead of one cache miss after
// another, and insertBatch does the same for their candidates.
//
// Each key is copied to the new table first and then cleared from the old
// one, so a reader finds it in one table or the other (or, for a moment,
// both, with the same value: writers, who could change it, wait for the
// store's mutex). Clearing is a store of the old control word and takes no
// lock: the old slot itself is left as it is, so a reader that matched it
// under the bucket's read lock keeps reading what was there. The stale
// copy costs nothing; it goes when the old table does, at the end of the
// growth.
type mover[K comparable, V any] struct {
	es    [moveBatch]slot[K, V]
	hs    [moveBatch]uint64
	n     int
	olds  [moveBatch]uint64 // old buckets taken from
	masks [moveBatch]uint64 // and their slots
	nb    int
}

// take adds the slots of old bucket i flagged in mask, flushing first if
// they would not fit.
func (mv *mover[K, V]) take(s *Map[K, V], st *tables[K, V], i, mask uint64) {
	for x := range mv.nb {
		if mv.olds[x] == i {
			mask &^= mv.masks[x] // two candidates can be one bucket
		}
	}
	if mask == 0 {
		return
	}
	if mv.n+bits.OnesCount64(mask) > moveBatch || mv.nb == moveBatch {
		mv.flush(s, st)
	}
	b := st.old.bucket(i)
	for m := mask; m != 0; m &= m - 1 {
		mv.es[mv.n] = b.slots[slotOf(m)]
		// Start loading the key's bytes, which flush hashes: their cache
		// misses then overlap with the visits to come.
		prefetchKey(&mv.es[mv.n].key, s.strKeys)
		mv.n++
	}
	mv.olds[mv.nb], mv.masks[mv.nb] = i, mask
	mv.nb++
}

// flush moves what was taken.
func (mv *mover[K, V]) flush(s *Map[K, V], st *tables[K, V]) {
	if mv.n == 0 {
		return
	}
	if s.strKeys {
		// Load each key's first byte before hashing any: the keys'
		// bytes lie all over the heap, and these loads, independent of
		// one another, let their cache misses overlap; hashing one key
		// after another would wait for each miss in turn.
		var touch byte
		for x := range mv.n {
			if k := keyString(&mv.es[x].key); len(k) > 0 {
				touch |= k[0]
			}
		}
		keep(uint64(touch))
	}
	for x := range mv.n {
		mv.hs[x] = st.cur.hash(mv.es[x].key)
	}
	st.cur.insertBatch(mv.es[:mv.n], mv.hs[:mv.n])
	// Clear the old slots with storeRelease (the holder of the store's
	// mutex is the only writer of control words): amd64 makes stores
	// visible in program order, so a reader that sees an old slot cleared
	// also sees the new table's control word that insertBatch stored
	// before, and finds the key there.
	for x := range mv.nb {
		b := st.old.bucket(mv.olds[x])
		bytes := mv.masks[x] >> 7 * 0xff
		storeRelease(&b.ctrl, b.ctrl.Load()&^bytes)
	}
	st.old.entries.Add(-int64(mv.n))
	clear(mv.es[:mv.n])
	mv.n, mv.nb = 0, 0
}
