package store

import (
	"math"
	"time"

	"github.com/twochoice/twochoice/hashfn"
)

// Expiry after access and per entry.
//
// An entry's expiry is one word beside its slot (bucketMeta), whatever
// gives it: DefaultTTL and SetWithTTL write it once, at the write;
// ExpireAfterAccess and an ExpiryCalculator also move it on a read. A
// reader holds no lock, so it moves the word with a compare-and-swap
// against the value it read inside the version check that validated the
// entry (cacheTable.lookup), as cacheTable.touch does for the policy word:
// if the entry was removed or replaced since, the word has changed and
// the swap writes nothing. (A replacement written at the same nanosecond
// with the same time to live has the same word, and takes the slide meant
// for the entry it replaced, which is what a read of it would have
// written.) And it moves the word only when that changes it by more than
// a 32nd of the new time to live, so that a key read from many cores is
// written a few times a TTL, not on every hit. A slide that lands in a
// table being replaced (a growth) after the copy read the entry is lost
// with that table: the entry keeps the expiry the copy read.
//
// The reads that count as uses slide (Get, and GetOrSet and GetOrLoad on
// a hit); looks that are not uses (a load's second look under its mutex,
// iteration, Compute) do not.

// ExpiryCalculator gives each entry of a cache its own time to live
// (CacheOptions.ExpiryCalculator). Each method returns the entry's time to
// live from now; a result ≤ 0 means the entry never expires. remaining is
// the time the entry had left, or 0 if it had no expiry, so returning
// remaining leaves the expiry as it was.
//
// The methods run on the goroutine of the operation, with no lock held
// for ExpireAfterRead and under the locks of k's buckets for the other
// two (as a Compute function runs): they must be quick and must not use
// the cache. A read calls ExpireAfterRead on every hit of an entry that
// has an expiry, and writes what it returns only when it moves the
// expiry by more than a 32nd of it (see CacheOptions.ExpireAfterAccess).
//
// An interface rather than a func(K, V) time.Duration, as in otter and
// Caffeine: a single function cannot tell a write from a read, and so
// cannot express expiry after access per entry, nor keep an entry's
// expiry across updates.
type ExpiryCalculator[K comparable, V any] interface {
	// ExpireAfterCreate returns the time to live of a new entry (or of
	// one whose predecessor had expired).
	ExpireAfterCreate(k K, v V) time.Duration
	// ExpireAfterUpdate returns the time to live of an entry whose value
	// a write replaced with v.
	ExpireAfterUpdate(k K, v V, remaining time.Duration) time.Duration
	// ExpireAfterRead returns the time to live of an entry a read found.
	ExpireAfterRead(k K, v V, remaining time.Duration) time.Duration
}

// accessExpiry is the calculator of CacheOptions.ExpireAfterAccess: every
// write and every read gives the entry d from then.
type accessExpiry[K comparable, V any] struct{ d time.Duration }

func (a accessExpiry[K, V]) ExpireAfterCreate(K, V) time.Duration { return a.d }
func (a accessExpiry[K, V]) ExpireAfterUpdate(_ K, _ V, _ time.Duration) time.Duration {
	return a.d
}

// ExpireAfterRead leaves an entry without an expiry (SetWithTTL with
// ttl ≤ 0) without one.
func (a accessExpiry[K, V]) ExpireAfterRead(_ K, _ V, remaining time.Duration) time.Duration {
	if remaining <= 0 {
		return 0
	}
	return a.d
}

// expByCalc is the expiry a write passes to setCache when the calculator
// gives it: it is worked out under the locks, where the write knows
// whether it creates the entry or updates it. No clock gives it: it is
// the earliest time an int64 holds.
const expByCalc = math.MinInt64

// slideShift: a read moves an expiry only by more than its new time to
// live >> slideShift.
const slideShift = 5

// useFuncs installs the options' functions, which the resolved options
// (config) do not hold: the deletion listener and the expiry calculator.
func (s *Cache[K, V]) useFuncs(o *CacheOptions[K, V]) {
	s.onDel = o.OnDeletion
	if o.ExpiryCalculator != nil {
		s.calc = o.ExpiryCalculator
		s.ttl.Store(true)
	}
}

// writeExpiry returns the expiry of k's entry written now with v, by the
// calculator: as created if created, else as updated from an entry whose
// expiry was old.
func (s *Cache[K, V]) writeExpiry(k K, v V, created bool, old int64) int64 {
	now := s.nowNanos()
	var d time.Duration
	if created {
		d = s.calc.ExpireAfterCreate(k, v)
	} else {
		var rem time.Duration
		if old != 0 {
			rem = time.Duration(max(old-now, 1))
		}
		d = s.calc.ExpireAfterUpdate(k, v, rem)
	}
	if d <= 0 {
		return 0
	}
	return expiryAt(now, d)
}

// slide moves the expiry of k's entry, found by a read at now in slot j of
// bucket i with expiry exp (not 0, not passed) and value v, to what the
// calculator says for a read, if that moves it by more than a 32nd of the
// new time to live (see the top of this file).
func (s *Cache[K, V]) slide(t *cacheTable[K, V], i uint64, j int, k K, v V, exp, now int64) {
	d := s.calc.ExpireAfterRead(k, v, time.Duration(exp-now))
	var nexp int64
	if d > 0 {
		nexp = expiryAt(now, d)
		if diff := nexp - exp; diff <= int64(d>>slideShift) && -diff <= int64(d>>slideShift) {
			return
		}
	}
	t.meta[i].exp[j].CompareAndSwap(exp, nexp)
}

// expiryOf returns the expiry of the entry in slot j of bucket i, which
// the caller holds, and whether it has passed.
func (s *Cache[K, V]) expiryOf(t *cacheTable[K, V], i uint64, j int) (exp int64, expired bool) {
	if !s.ttl.Load() {
		return 0, false
	}
	exp = t.meta[i].exp[j].Load()
	return exp, exp != 0 && exp <= s.nowNanos()
}

// replaceLocked stores v for k in slot j of bucket i, which holds k's
// entry; the caller holds the bucket. oldExp and expired are the entry's
// expiry and whether it had passed (expiryOf); exp is the new expiry, or
// expByCalc. counted says the caller has counted the write as an insert;
// else replaceLocked counts it as an update, or, if the entry had expired,
// as an expiration and an insert, which the deletion listener hears of as
// an expired entry. It returns the event to report once the locks are
// released (Cause 0 without a listener).
func (s *Cache[K, V]) replaceLocked(t *cacheTable[K, V], i uint64, j int, k K, v V, exp int64, hint uint64, counted bool, oldExp int64, expired bool, rv *reservation[V]) DeletionEvent[K, V] {
	var ev DeletionEvent[K, V]
	if s.onDel != nil {
		e := &t.cbucket(i).b.slots[j]
		ev = DeletionEvent[K, V]{Key: e.key, Value: e.val, Cause: DeletionReplaced}
		if expired {
			ev.Cause = DeletionExpired
		}
	}
	if exp == expByCalc {
		exp = s.writeExpiry(k, v, expired, oldExp)
	}
	var oldW uint32
	if expired && s.rec != nil {
		oldW = t.weightAt(i, j)
	}
	t.update(i, j, k, v, exp, s.ttl.Load(), s.tickNow(hint), s.slack, &s.pol)
	t.reweigh(i, j, rv)
	if t.wrote != nil {
		t.stampWrite(i, j, s.nowNanos())
	}
	st := s.tot.stripe(hint)
	switch {
	case expired:
		st.expirations.Add(1)
		s.recordEviction(DeletionExpired, oldW)
		if !counted {
			// An insert that took an expired entry's place: a fill
			// counted before its tick, as setCache counts one.
			st.fills.Add(1)
			s.ticks.tick(hint)
		}
	case !counted:
		st.updates.Add(1)
	}
	return ev
}

// RemoveExpired removes every expired entry from the cache and returns how
// many it removed. Each is reported to the deletion listener as expired
// and counted in Stats.Expirations. It visits every bucket of the table,
// reading the expiries without a lock and locking only the buckets that
// hold an expired entry, one at a time, so that it never stops the
// cache's readers or the writers of other buckets; it costs a pass over
// the table's expiry words (8 bytes a slot), and nothing in a cache whose
// entries never had an expiry.
//
// Len counts expired entries until they are removed; right after
// RemoveExpired, it counts the entries that were live when their bucket
// was visited, plus what concurrent writers added since.
func (s *Cache[K, V]) RemoveExpired() int {
	if !s.ttl.Load() {
		return 0
	}
	n := 0
	var evs []DeletionEvent[K, V]
	t := s.tab.Load()
	now := s.nowNanos()
	for i := uint64(0); i < t.n; i++ {
		if !t.hasExpired(i, now) {
			continue
		}
		b := t.bucket(i)
		b.sync.lock()
		if t.frozen.Load() {
			// Replaced: the table that replaces it leaves expired
			// entries out (copyInto); go on in it from the start.
			b.sync.unlock()
			s.awaitTable()
			t, i = s.tab.Load(), math.MaxUint64 // the loop's i++ makes it 0
			continue
		}
		one := [1]uint64{i}
		s.cowTouchLocked(t, one[:])
		m := &t.meta[i]
		for f := ctrl(b.ctrl.Load()).full(); f != 0; f &= f - 1 {
			j := slotOf(f)
			if x := m.exp[j].Load(); x == 0 || x > now {
				continue
			}
			if s.onDel != nil {
				evs = append(evs, DeletionEvent[K, V]{Key: b.slots[j].key, Value: b.slots[j].val, Cause: DeletionExpired})
			}
			w := t.weightAt(i, j)
			t.clearSlot(i, j)
			s.tot.stripe(stripeHint()).expirations.Add(1)
			s.recordEviction(DeletionExpired, w)
			n++
		}
		b.sync.unlock()
		for _, ev := range evs {
			s.onDel(ev)
		}
		evs = evs[:0]
	}
	return n
}

// hasExpired reports whether bucket i holds an entry whose expiry is at
// or before now, reading the expiries without a lock.
func (t *cacheTable[K, V]) hasExpired(i uint64, now int64) bool {
	m := &t.meta[i]
	for f := ctrl(t.cbucket(i).b.ctrl.Load()).full(); f != 0; f &= f - 1 {
		if x := m.exp[slotOf(f)].Load(); x != 0 && x <= now {
			return true
		}
	}
	return false
}

// findSlot returns the bucket and slot of k in t, read without a lock:
// where k was at some moment during the call, for callers that check
// again under the bucket's lock.
func (t *cacheTable[K, V]) findSlot(k K, h uint64) (i uint64, j int, ok bool) {
	tag := tagOf(h)
	var c [hashfn.MaxChoices]uint64
	for _, i := range t.cands(h, &c) {
		if ctrl(t.cbucket(i).b.ctrl.Load()).match(tag) == 0 {
			continue
		}
		if f, ok := t.lookup(i, k, tag, false); ok {
			return i, f.slot, true
		}
	}
	return 0, 0, false
}
