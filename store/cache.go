package store

import (
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twochoice/twochoice/hashfn"
)

// Cache is a bounded concurrent key-value cache on a bucketed
// balanced-allocation table: it holds at most CacheOptions.MaxEntries
// entries, and a new key whose candidate buckets are full evicts one of
// their entries, the one its policy expects to be used last (see
// "Eviction" in the package documentation). Entries may expire
// (SetWithTTL, CacheOptions.DefaultTTL). Its methods are safe for
// concurrent use by any number of goroutines.
//
// Writers lock only their key's candidate buckets (an update only the
// bucket that holds the key), in increasing order, so writes on different
// keys run in parallel; there is no cache-wide lock, list or background
// goroutine. Readers take no lock.
type Cache[K comparable, V any] struct {
	cfg config // resolved: no zero fields

	// tab is the table; a growth, Clear and SetMaximum replace it
	// (cache_grow.go).
	tab atomic.Pointer[cacheTable[K, V]]

	lay     wordLayout // how slots are read: optimistically or under a lock
	strKeys bool       // K is a string kind (setCache prefetches a victim's bytes)

	// The eviction policy (evict.go). Read on every operation and
	// written almost never, these fields are kept off the cache lines of
	// the counters (counters' padding): sharing a line with a counter
	// that another core bumps on every call made each of their reads a
	// cache miss.
	pol    policy   // the eviction ranking in use (evict.go, ranking.go)
	sh     *shadows // the miniature caches that choose it (shadow.go)
	shMask uint64   // a key whose hash >> shadowBit has none of these bits is sampled
	// walks counts the loops over the cache (All) under way: while one
	// runs, no eviction relocates an entry (relocate.go).
	walks atomic.Int32
	ticks *ticks
	slack uint32                    // recency slack of a hit, in tick units (evict.go)
	tq    uint8                     // the policy words' tick unit is 2^tq ticks (evict.go)
	onDel func(DeletionEvent[K, V]) // CacheOptions.OnDeletion
	rec   StatsRecorder             // CacheOptions.StatsRecorder (stats_recorder.go)
	// The weight bound (weight.go): nil, and never loaded, without
	// CacheOptions.MaxWeight.
	weigher func(K, V) uint32
	wsum    *weightSum
	clock   Clock       // for TTLs
	ttl     atomic.Bool // some entry has or had an expiry
	// calc gives the entries' expiries on writes and reads (expiry.go):
	// CacheOptions.ExpiryCalculator, or ExpireAfterAccess's; nil for
	// expiry after write alone.
	calc ExpiryCalculator[K, V]

	tot  counters // hits, misses and the writers' counts, striped; padded on both sides
	mono monotone // the highest figures Stats returned (counters.go)

	mu     sync.Mutex                    // replacing the table, and the snapshot instant of Save
	view   atomic.Pointer[cowView[K, V]] // the snapshot being taken, if any (cow.go)
	saveMu sync.Mutex                    // one Save at a time

	pending []DeletionEvent[K, V] // removed by a replacement of the table, to report (cache_grow.go); under mu

	lds atomic.Pointer[loads[K, V]] // loads in flight (cache_load.go), made at the first miss of a load

	// Refreshes (cache_refresh.go): the sequence their marks are drawn
	// from, and the counts Stats reports.
	refreshSeq                 atomic.Int64
	refreshes, refreshFailures atomic.Uint64
}

// NewCache returns an empty cache of at most o.MaxEntries entries. Its
// table grows as entries arrive, up to the bound (see CacheOptions.MaxEntries).
// Options that cannot be used get an error wrapping ErrOptions, never a
// panic. Keys are hashed as NewMap says.
func NewCache[K comparable, V any](o CacheOptions[K, V]) (*Cache[K, V], error) {
	c, err := o.resolve()
	if err != nil {
		return nil, err
	}
	s := newCache[K, V](c, o.Weigher)
	s.useFuncs(&o)
	s.rec = o.StatsRecorder
	return s, nil
}

// newCache returns an empty cache of resolved options o, weighing its
// entries with weigher if o has a weight bound.
func newCache[K comparable, V any](o config, weigher func(K, V) uint32) *Cache[K, V] {
	s := &Cache[K, V]{cfg: o, lay: slotLayout[K, V]()}
	if o.MaxWeight > 0 {
		s.weigher, s.wsum = weigher, new(weightSum)
	}
	s.strKeys = optimisticReads && shapeOf(reflect.TypeFor[K]()) == shapeString
	s.ticks = newTicks(uint64(recencySlack(o.MaxEntries)))
	s.tq = tickUnit(o.MaxEntries)
	s.slack = max(recencySlack(o.MaxEntries)>>s.tq, 1)
	s.pol.initRanks(uint64(o.MaxEntries) >> s.tq)
	start, _ := rankingIndex(o.Ranking) // checked by resolveCache
	s.sh = new(shadows)
	if start >= 0 {
		s.sh.pinned = true
	} else {
		start = defaultRanking
	}
	s.pol.set(start)
	s.sh.init(o.MaxEntries, &s.pol, func() uint64 { h, m := s.tot.sum(); return h + m })
	s.shMask, _ = shadowMask(o.MaxEntries)
	s.clock = o.Clock
	if s.clock == nil {
		s.clock = systemClock{}
	}
	if o.ExpireAfterAccess > 0 {
		s.calc = accessExpiry[K, V]{o.ExpireAfterAccess}
		s.ttl.Store(true)
	}
	s.tab.Store(s.startTable(&s.cfg))
	return s
}

// Options returns the options in use, defaults filled in (the seed drawn
// when CacheOptions.Seed was 0), with the bound in force (SetMaximum
// changes it).
func (s *Cache[K, V]) Options() CacheOptions[K, V] {
	cfg := s.configOf(s.tab.Load())
	o := cacheOptionsOf[K, V](&cfg)
	o.OnDeletion = s.onDel
	o.Weigher = s.weigher
	if s.cfg.ExpireAfterAccess == 0 {
		o.ExpiryCalculator = s.calc
	}
	o.StatsRecorder = s.rec
	return o
}

// Seed returns the seed of the cache's hash function.
func (s *Cache[K, V]) Seed() uint64 { return s.cfg.Seed }

// hash returns k's hash.
func (s *Cache[K, V]) hash(k K) uint64 { return s.tab.Load().hash(k) }

// Get returns the value stored for k and whether there is one. An expired
// entry is never returned.
//
// It takes no lock: it checks the tags of k's candidates and reads the
// matching slot optimistically, as a Map's Get does, with the entry's
// expiry and policy word inside the same version check. A hit records
// itself in the entry's policy word when that changes the word noticeably,
// and, under CacheOptions.ExpireAfterAccess or an ExpiryCalculator, moves
// the entry's expiry (expiry.go); a Get that finds k expired takes the
// lock of k's bucket to remove it.
func (s *Cache[K, V]) Get(k K) (V, bool) {
	t := s.tab.Load()
	h := t.hash(k)
	return s.getCache(t, k, h, tagOf(h), stripeHint(), true)
}

// getCache is Get in cache mode; it counts the hit or miss when count is
// set, and leaves it to the caller otherwise. The TTL flag is read before
// the slots: an entry written with an expiry after that is one this Get
// may return anyway (it raced the Set), and it had not expired when it
// was written.
func (s *Cache[K, V]) getCache(t *cacheTable[K, V], k K, h uint64, tag uint8, hint uint64, count bool) (V, bool) {
	var (
		c       [hashfn.MaxChoices]uint64
		matches [hashfn.MaxChoices]bool
	)
	ttl := s.ttl.Load()
	cs := t.cands(h, &c)
	s.replaySampled(h)
	// Check every candidate's tags before reading any slot, so that the
	// candidates' cache misses overlap (as get2 does for a map). A
	// candidate without a matching tag needs no further look: a key
	// present all along keeps its slot and its tag, but for a
	// relocation, which a Get that races it may miss as it may miss an
	// eviction (relocate.go). In a table past a
	// core's L2, prefetch every line of each candidate with its control
	// word, as setCache does, so that a hit's slot is not a second miss
	// after its header's (BenchmarkCacheGetRatio at a tenth of the keys).
	for x, i := range cs {
		cb := t.cbucket(i)
		if t.prefetch {
			prefetchCacheBucket(cb)
		}
		matches[x] = ctrl(cb.b.ctrl.Load()).match(tag) != 0
	}
	for x, i := range cs {
		if !matches[x] {
			continue
		}
		f, ok := t.lookup(i, k, tag, ttl)
		if !ok {
			continue
		}
		if f.exp != 0 {
			now := s.nowNanos()
			if f.exp <= now {
				s.expire(t, i, k, tag)
				break
			}
			if s.calc != nil {
				s.slide(t, i, f.slot, k, f.val, f.exp, now)
			}
		}
		t.touch(i, f.slot, f.acc, s.tickNow(hint), s.slack, &s.pol)
		if count {
			s.countGet(true, hint)
		}
		return f.val, true
	}
	if count {
		s.countGet(false, hint)
	}
	var zero V
	return zero, false
}

// replaySampled replays a Get of the key with hash h on the miniature
// caches that choose the eviction policy (shadow.go), if the key is in
// their sample.
func (s *Cache[K, V]) replaySampled(h uint64) {
	if (h>>shadowBit)&s.shMask == 0 {
		s.sh.get(h)
	}
}

// getUncounted is Get without the count of its hit or miss, for the
// calls that count a Get by what they return (GetOrLoad, GetOrLoadAll).
func (s *Cache[K, V]) getUncounted(k K, hint uint64) (V, bool) {
	t := s.tab.Load()
	h := t.hash(k)
	return s.getCache(t, k, h, tagOf(h), hint, false)
}

// countGets counts hits and misses of as many Gets in Stats and the
// recorder, which hears of none when there are none.
func (s *Cache[K, V]) countGets(hits, misses int, hint uint64) {
	st := s.tot.stripe(hint)
	if hits > 0 {
		st.hits.Add(uint64(hits))
		s.recordHits(hits)
	}
	if misses > 0 {
		st.misses.Add(uint64(misses))
		s.recordMisses(misses)
	}
}

// countGet counts a Get's hit or miss in Stats and the recorder.
func (s *Cache[K, V]) countGet(hit bool, hint uint64) {
	if hit {
		s.tot.hit(hint)
		s.recordHits(1)
		return
	}
	s.tot.miss(hint)
	s.recordMisses(1)
}

// expire removes k from bucket i if it is there and expired: a Get that
// finds an expired entry removes it, so Len stops counting it. In a frozen
// table it leaves it: the table that replaces it has no expired entries.
func (s *Cache[K, V]) expire(t *cacheTable[K, V], i uint64, k K, tag uint8) {
	b := t.bucket(i)
	b.sync.lock()
	var ev DeletionEvent[K, V]
	var w uint32
	if j := b.find(k, tag); j >= 0 && !t.frozen.Load() {
		if x := t.meta[i].exp[j].Load(); x != 0 && x <= s.nowNanos() {
			one := [1]uint64{i}
			s.cowTouchLocked(t, one[:])
			ev = DeletionEvent[K, V]{Key: k, Value: b.slots[j].val, Cause: DeletionExpired}
			w = t.weightAt(i, j)
			t.clearSlot(i, j)
			s.tot.stripe(stripeHint()).expirations.Add(1)
		}
	}
	b.sync.unlock()
	if ev.Cause != 0 {
		s.recordEviction(DeletionExpired, w)
	}
	if ev.Cause != 0 && s.onDel != nil {
		s.onDel(ev)
	}
}

// Set stores v for k, replacing any value k had, to expire after
// CacheOptions.DefaultTTL or ExpireAfterAccess if one is set, or when the
// ExpiryCalculator says. It may evict another entry among
// k's candidate buckets to make room; k itself is never refused: after Set
// returns, Get(k) returns v until k is set again, deleted, expires, or is
// evicted by a later Set of another key.
func (s *Cache[K, V]) Set(k K, v V) {
	t := s.tab.Load()
	h := t.hash(k)
	if s.wsum != nil {
		s.setWeighted(k, v, h, tagOf(h), s.defaultExpiry(), nil)
		return
	}
	s.setCache(k, v, h, tagOf(h), s.defaultExpiry(), nil, nil)
}

// SetWithTTL stores v for k, replacing any value k had, to expire after
// ttl (by CacheOptions.Clock); ttl ≤ 0 means it never expires, whatever
// the options say (DefaultTTL, ExpireAfterAccess, ExpiryCalculator). Under
// ExpireAfterAccess or an ExpiryCalculator, reads move the expiry as they
// move any other. An expired entry is never returned. It is counted by Len
// until it is removed, which happens at the first of: a Get of its key, a
// Set or Delete of its key, a Set of another key that needs room among its
// candidate buckets (expired entries are the first victims there), a
// growth of the table, or RemoveExpired.
func (s *Cache[K, V]) SetWithTTL(k K, v V, ttl time.Duration) {
	var exp int64
	if ttl > 0 {
		exp = expiryAt(s.nowNanos(), ttl)
	}
	h := s.hash(k)
	if s.wsum != nil {
		s.setWeighted(k, v, h, tagOf(h), exp, nil)
		return
	}
	s.setCache(k, v, h, tagOf(h), exp, nil, nil)
}

// GetOrSet returns the value stored for k and true if there is one;
// otherwise it stores v for k, as Set would, and returns v and false. The
// look and the store are one step: of many goroutines that call GetOrSet
// on the same absent key at once, one stores its value and all the others
// get that value back. An expired entry counts as absent, a stored v gets
// CacheOptions.DefaultTTL, and a hit marks the entry used as a Get does. It
// is counted as a Get (hit or miss) and, when it stores, as a Set.
//
// It is a Get to the eviction policy: a key in its sample is replayed on
// the miniature caches (shadow.go), as Get replays it, so a cache used
// through GetOrSet alone chooses its ranking from the same requests as one
// used through Get and Set (TestCacheGetOrSetInformsPolicy); without the
// replay, on a loop over twice such a cache, 2 points fewer of its
// requests hit. The policy's choices then cost a GetOrSet what they cost
// a Get and a Set: where the miniatures find that relocating evictions
// pays (relocate.go), a GetOrSet that evicts relocates, as a Set would
// (BenchmarkCacheGetOrSetRatio; docs/performance.md). It looks under its
// candidates' locks only, once: a lock-free look first, as a Map's
// GetOrSet makes, would repeat the probe of every key it misses, which a
// cache that evicts misses often.
func (s *Cache[K, V]) GetOrSet(k K, v V) (V, bool) {
	t := s.tab.Load()
	h := t.hash(k)
	hint := stripeHint()
	s.replaySampled(h)
	var (
		old    V
		loaded bool
	)
	if s.wsum != nil {
		old, loaded = s.setWeighted(k, v, h, tagOf(h), s.defaultExpiry(), &computeOf[V]{})
	} else {
		old, loaded = s.setCache(k, v, h, tagOf(h), s.defaultExpiry(), &computeOf[V]{}, nil)
	}
	if !loaded {
		s.tot.miss(hint)
		s.recordMisses(1)
	}
	return old, loaded
}

// defaultExpiry returns the expiry of an entry Set stores now:
// CacheOptions.DefaultTTL from now, expByCalc for the calculator to give
// (ExpireAfterAccess's included), or 0 (never).
func (s *Cache[K, V]) defaultExpiry() int64 {
	if s.cfg.DefaultTTL > 0 {
		return expiryAt(s.nowNanos(), s.cfg.DefaultTTL)
	}
	if s.calc != nil {
		return expByCalc
	}
	return 0
}

// Delete removes k and reports whether it was there (an expired entry is
// removed too, but was not there to delete).
func (s *Cache[K, V]) Delete(k K) bool {
	t := s.tab.Load()
	h := t.hash(k)
	return s.deleteCache(k, h, tagOf(h))
}

// lockCandidates locks the candidates of hash h in the cache's table,
// waiting out a replacement of the table (a writer that finds its table
// frozen writes to the one that replaces it), and returns the table and
// the candidates; the caller releases lk with unlockAll.
func (s *Cache[K, V]) lockCandidates(h uint64, c *[hashfn.MaxChoices]uint64, lk *locked) (*cacheTable[K, V], []uint64) {
	for {
		t := s.tab.Load()
		cs := t.cands(h, c)
		lockAll(lk, t, cs)
		if !t.frozen.Load() {
			return t, cs
		}
		unlockAll(lk, t)
		s.awaitTable()
	}
}

// deleteCache is Delete in cache mode.
func (s *Cache[K, V]) deleteCache(k K, h uint64, tag uint8) bool {
	var (
		c  [hashfn.MaxChoices]uint64
		lk locked
	)
	t, cs := s.lockCandidates(h, &c, &lk)
	s.cowTouchLocked(t, lk.idx[:lk.n])
	for _, i := range cs {
		if j := t.bucket(i).find(k, tag); j >= 0 {
			// An expired entry goes too, but was not there to delete.
			st := s.tot.stripe(stripeHint())
			ev := DeletionEvent[K, V]{Key: k, Value: t.bucket(i).slots[j].val, Cause: DeletionDeleted}
			if x := t.meta[i].exp[j].Load(); x != 0 && x <= s.nowNanos() {
				ev.Cause = DeletionExpired
				st.expirations.Add(1)
			} else {
				st.deletes.Add(1)
			}
			w := t.weightAt(i, j)
			t.clearSlot(i, j)
			unlockAll(&lk, t)
			if ev.Cause == DeletionExpired {
				s.recordEviction(DeletionExpired, w)
			}
			if s.onDel != nil {
				s.onDel(ev)
			}
			return ev.Cause == DeletionDeleted
		}
	}
	unlockAll(&lk, t)
	return false
}

// Len returns the number of entries the table holds: never more than
// MaxEntries. It counts expired entries until they are removed (see
// SetWithTTL for when); RemoveExpired removes them all, so that Len then
// counts the live entries alone.
func (s *Cache[K, V]) Len() int { return int(s.tab.Load().live.Load()) }

// Clear removes every entry, and gives back the memory of a table that
// grew: the cache starts again from its first table. Counters (Stats) keep
// counting across a Clear; the eviction policy keeps what it learnt of the
// workload, but for the keys a grown table had evicted (its ghost goes
// with it).
//
// A write that runs concurrently with Clear may land before it, and be
// cleared, or after it, and stay.
func (s *Cache[K, V]) Clear() {
	s.mu.Lock()
	t := s.tab.Load()
	o := s.configOf(t)
	nt := s.startTable(&o)
	if nt.final && t.final {
		nt.gh = t.gh // same size: the evicted keys' history stays
	}
	if t.wts != nil {
		// The entries' weights leave with them: after the sweep no
		// writer stores into t, so the sum is final.
		s.freeze(t)
		var w int64
		for i := range t.wts {
			for _, x := range t.wts[i] {
				w += int64(x)
			}
		}
		s.wsum.sum.Add(-w)
	} else {
		t.frozen.Store(true)
	}
	s.tab.Store(nt)
	s.mu.Unlock()
}
