package store

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/twochoice/twochoice/hashfn"
)

// Refresh after write (CacheOptions.RefreshAfter).
//
// A cache with RefreshAfter keeps each slot's write time beside it
// (bucketWrites, a slice allocated only then, as the expiries are), in
// Unix nanoseconds by the cache's clock: every write of the slot stamps
// it, clearing the slot zeroes it, and a growth copies it with the entry.
//
// GetOrLoad, on a hit, reads the entry's write time without a lock; if it
// is older than RefreshAfter, it claims the refresh: under the mutex of
// the loads in flight (cache_load.go), if no load of the key is in flight,
// it locks the entry's bucket, checks that the entry and its write time
// are the ones it read, and replaces the write time with a mark, a
// negative number drawn from a cache-wide sequence, so unique. It
// registers the refresh as the key's load in flight and starts the load
// on a goroutine of its own; the callers keep getting the old value, a
// caller that misses the key meanwhile waits for the refresh as for a
// load, and no other refresh of the key starts while the mark is there.
//
// When the load ends, the refresh finds the key again under its bucket's
// lock. Every write of the entry (Set, Compute, another load) stamps a
// time, and a deletion or eviction clears the slot, so the mark is still
// there only if nothing wrote or removed the entry since the claim: then
// the refresh stores its value (as a Set of the key would) or, if the
// load failed, puts the old write time back, so that a later read tries
// again. Otherwise the write won, and the refresh's result is dropped.

// bucketWrites holds the write times of a bucket's slots: Unix
// nanoseconds by the cache's clock, a refresh's mark while one is in
// flight (negative), or 0 for an empty slot.
type bucketWrites struct {
	at [slotsPerBucket]atomic.Int64
}

// stampWrite records a write of slot j of bucket i at now; the caller
// holds the bucket.
func (t *cacheTable[K, V]) stampWrite(i uint64, j int, now int64) {
	t.wrote[i].at[j].Store(max(now, 1))
}

// maybeRefresh starts a refresh of k through load if its entry was written
// more than RefreshAfter ago and no load of k is in flight (see the top of
// this file). The refresh runs with ctx's values but not its deadline or
// cancellation: it outlives the call that started it.
func (s *Cache[K, V]) maybeRefresh(ctx context.Context, k K, load func(context.Context, K) (V, error)) {
	t := s.tab.Load()
	h := t.hash(k)
	i, j, ok := t.findSlot(k, h)
	if !ok {
		return
	}
	w := t.wrote[i].at[j].Load()
	if w <= 0 || s.nowNanos()-w < int64(s.cfg.RefreshAfter) {
		return
	}
	l := s.loadTable()
	l.mu.Lock()
	if _, busy := l.calls[k]; busy {
		l.mu.Unlock()
		return
	}
	// The loads' mutex, then the bucket: no one takes them the other way.
	b := t.bucket(i)
	b.sync.lock()
	claimed := !t.frozen.Load() && b.find(k, tagOf(h)) == j && t.wrote[i].at[j].Load() == w
	var mark int64
	if claimed {
		mark = -s.refreshSeq.Add(1)
		t.wrote[i].at[j].Store(mark)
	}
	b.sync.unlock()
	if !claimed {
		l.mu.Unlock()
		return
	}
	c := &loadCall[V]{done: make(chan struct{})}
	l.calls[k] = c
	l.mu.Unlock()
	s.refreshes.Add(1)
	go s.refresh(context.WithoutCancel(ctx), l, k, c, mark, w, load)
}

// refresh runs the refresh of k claimed with mark over write time was, and
// ends it. A panic in load is recovered, as a failed refresh: it has no
// caller to go to. The callers that waited for it get its result.
func (s *Cache[K, V]) refresh(ctx context.Context, l *loads[K, V], k K, c *loadCall[V], mark, was int64, load func(context.Context, K) (V, error)) {
	defer l.end(k, c)
	defer func() {
		if r := recover(); r != nil {
			c.err = fmt.Errorf("%w: key %v: %v", ErrLoadPanicked, k, r)
			s.refreshFailures.Add(1)
			s.endRefresh(k, mark, was, nil)
		}
	}()
	c.val, c.err = load(ctx, k)
	if c.err != nil {
		s.refreshFailures.Add(1)
		s.endRefresh(k, mark, was, nil)
		return
	}
	s.endRefresh(k, mark, was, &c.val)
}

// endRefresh ends the refresh of k claimed with mark: if k's entry still
// carries the mark, it stores *v there as a Set would (an update, with the
// expiry a Set gives), or, with v nil (a failed load), puts back the
// write time was. It reports whether it stored v.
func (s *Cache[K, V]) endRefresh(k K, mark, was int64, v *V) bool {
	exp := int64(0)
	if v != nil {
		exp = s.defaultExpiry()
	}
	hint := stripeHint()
	// In a cache bounded by weight the reloaded value's weight is
	// reserved before any lock, as a Set's is; a value heavier than the
	// bound is dropped and the entry left as it is (the refresh counts as
	// failed), and what the reservation does not spend goes back.
	var rv *reservation[V]
	if v != nil && s.wsum != nil {
		w := s.weigh(k, *v)
		if int64(w) > s.cfg.MaxWeight {
			return s.endRefresh(k, mark, was, nil)
		}
		s.reserve(w)
		rv = &reservation[V]{w: w, res: w}
		defer s.unreserve(rv)
	}
	for {
		t := s.tab.Load()
		h := t.hash(k)
		tag := tagOf(h)
		var c [hashfn.MaxChoices]uint64
		retry := false
		for _, i := range t.cands(h, &c) {
			b := t.bucket(i)
			if ctrl(b.ctrl.Load()).match(tag) == 0 {
				continue
			}
			b.sync.lock()
			if t.frozen.Load() {
				b.sync.unlock()
				s.awaitTable()
				retry = true
				break
			}
			j := b.find(k, tag)
			if j < 0 {
				b.sync.unlock()
				continue
			}
			if t.wrote[i].at[j].Load() != mark {
				b.sync.unlock()
				return false // written or removed since: the write won
			}
			if v == nil {
				t.wrote[i].at[j].Store(was)
				b.sync.unlock()
				return false
			}
			one := [1]uint64{i}
			s.cowTouchLocked(t, one[:])
			oldExp, expired := s.expiryOf(t, i, j)
			ev := s.replaceLocked(t, i, j, k, *v, exp, hint, false, oldExp, expired, rv)
			t.unlockBucket(i)
			if ev.Cause != 0 {
				s.onDel(ev)
			}
			return true
		}
		if !retry {
			return false // removed
		}
	}
}
