package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Loading through the cache: GetOrLoad and GetOrLoadAll.
//
// A miss registers the key in the cache's table of loads in flight (one
// mutex and a Go map, made at the first miss of a loading call, so a cache
// that never loads pays nothing for it); a caller that misses a key already
// in the table waits for that load instead of starting one. The loader runs
// in the caller that registered the key, its result is stored (Set) before
// the key leaves the table, and the key leaves the table under the same
// mutex that a newcomer holds while it checks the cache again: so a
// newcomer either finds the load in flight or finds its value stored, and
// one load serves every caller that missed the key while it ran.

var (
	// ErrLoadPanicked is returned to the callers that waited for a load
	// whose loader panicked; the caller that ran the loader gets the
	// panic itself.
	ErrLoadPanicked = errors.New("store: the loader panicked")
	// ErrNotLoaded is returned for a key that a bulk loader was asked
	// for and returned no value of, to the callers that waited for it.
	ErrNotLoaded = errors.New("store: the loader returned no value for the key")
)

// loadCall is a load in flight: done is closed once val and err are set.
type loadCall[V any] struct {
	done chan struct{}
	val  V
	err  error
}

// loads is a cache's table of loads in flight, by key.
type loads[K comparable, V any] struct {
	mu    sync.Mutex
	calls map[K]*loadCall[V]

	// The loaders' calls that returned a value and that failed, and the
	// time they took in all, for Stats.
	successes, failures atomic.Uint64
	nanos               atomic.Int64
}

// loadTable returns the cache's table of loads in flight, made at first use.
func (s *Cache[K, V]) loadTable() *loads[K, V] {
	if l := s.lds.Load(); l != nil {
		return l
	}
	s.lds.CompareAndSwap(nil, &loads[K, V]{calls: make(map[K]*loadCall[V])})
	return s.lds.Load()
}

// GetOrLoad returns the value stored for k; on a miss it calls load(ctx, k),
// stores the value it returns (as Set does, with CacheOptions.DefaultTTL)
// and returns it. Concurrent callers that miss the same key share one call
// of a loader: the first runs its load, the others wait for its result and
// do not call theirs. So the loader runs once for any number of goroutines
// that miss k at the same time.
//
// An error from load is returned to the caller that ran it and to every
// caller that waited for it, and nothing is stored: the next miss loads
// again. A panic in load propagates to the caller that ran it, unchanged;
// the callers that waited for it get an error wrapping ErrLoadPanicked. A
// waiter whose ctx ends stops waiting and returns ctx's error; the load
// goes on for the others. The loader gets the ctx of the caller that runs
// it, so a load that honours its ctx fails for all the waiters when that
// caller's ctx ends.
//
// Every call counts as a Get and a stored value as a Set. The Get is a hit
// when the call returns a stored value without a load (its own or one it
// waits for): a first look that races a relocation of k and misses it, and
// a second look under the loads' lock that finds it, count one hit.
// load must not call the cache's writing methods for k (Set,
// Compute, ...): they do not wait for the load, and the load's result
// replaces what they stored.
//
// # Refresh
//
// Under CacheOptions.RefreshAfter, a hit on an entry written more than
// RefreshAfter ago returns its value at once and starts a refresh: a call
// of load on a goroutine of its own, with ctx's values but without its
// deadline or cancellation. Callers keep getting the old value while it
// runs, and a caller that misses k meanwhile waits for it as for a load.
// One refresh of a key runs at a time, and none while a load of the key
// is in flight. Its value is stored as a Set of k would store it
// (DefaultTTL, or the ExpiryCalculator's update), unless k was written or
// removed while it ran: that write wins, and the refresh's value is
// dropped. A refresh whose load fails (an error, or a panic, which the
// refresh recovers) leaves the entry as it was, to be refreshed again on a
// later hit; Stats counts refreshes and their failures. Only GetOrLoad and
// GetOrLoadAll refresh: a Get of an old entry returns it and does nothing
// more.
func (s *Cache[K, V]) GetOrLoad(ctx context.Context, k K, load func(ctx context.Context, k K) (V, error)) (V, error) {
	hint := stripeHint()
	if v, ok := s.getUncounted(k, hint); ok {
		s.countGet(true, hint)
		if s.cfg.RefreshAfter > 0 {
			s.maybeRefresh(ctx, k, load)
		}
		return v, nil
	}
	if testHookMissed != nil {
		testHookMissed()
	}
	l := s.loadTable()
	l.mu.Lock()
	if c, ok := l.calls[k]; ok {
		l.mu.Unlock()
		s.countGet(false, hint)
		if testHookWait != nil {
			testHookWait()
		}
		return c.wait(ctx)
	}
	// Stored while this caller looked it up, by a load that has ended, or
	// moved by a relocation that the first look raced.
	if v, ok := s.Peek(k); ok {
		l.mu.Unlock()
		s.countGet(true, hint)
		return v, nil
	}
	c := &loadCall[V]{done: make(chan struct{})}
	l.calls[k] = c
	l.mu.Unlock()
	s.countGet(false, hint)

	// A panic in load goes on up to this caller unrecovered; on its way
	// it releases the waiters.
	finished := false
	start := time.Now()
	defer func() {
		if !finished {
			s.recordLoad(l, start, true)
			c.err = fmt.Errorf("%w: key %v", ErrLoadPanicked, k)
			l.end(k, c)
		}
	}()
	c.val, c.err = load(ctx, k)
	finished = true
	s.recordLoad(l, start, c.err != nil)
	if c.err == nil {
		s.Set(k, c.val)
	}
	l.end(k, c)
	return c.val, c.err
}

// GetOrLoadAll returns the values stored for keys, loading the missing
// ones with one call of load: the keys that are neither stored nor being
// loaded by another caller, each once, in the order of keys. It waits, as
// GetOrLoad does, for the keys that other callers are loading, and those
// callers wait for the keys this one loads. The values load returns for
// the keys it was asked are stored (as Set does) and returned; a key it
// leaves out is absent from the result, and a caller waiting for it gets
// an error wrapping ErrNotLoaded. Keys it returns that it was not asked
// for are ignored.
//
// An error from load, or from a load that this call waited for, is
// returned with a nil map; nothing load returned is stored then. A panic
// in load propagates as GetOrLoad's does, the waiters for its keys getting
// ErrLoadPanicked; ctx's end stops the waiting, with ctx's error.
//
// Under CacheOptions.RefreshAfter, each key found written more than
// RefreshAfter ago is refreshed as GetOrLoad refreshes it, by a call of
// load for that key alone.
func (s *Cache[K, V]) GetOrLoadAll(ctx context.Context, keys []K, load func(ctx context.Context, keys []K) (map[K]V, error)) (map[K]V, error) {
	out := make(map[K]V, len(keys))
	var missed []K
	// Each look-up counts as a Get, a hit when the key is found at the
	// first look or, as in GetOrLoad, at the second under the loads' lock.
	hint := stripeHint()
	hits := 0
	for _, k := range keys {
		if _, dup := out[k]; dup {
			continue
		}
		if v, ok := s.getUncounted(k, hint); ok {
			out[k] = v
			hits++
			if s.cfg.RefreshAfter > 0 {
				s.maybeRefresh(ctx, k, func(ctx context.Context, k K) (V, error) {
					return loadOne(ctx, k, load)
				})
			}
		} else {
			missed = append(missed, k)
		}
	}
	if len(missed) == 0 {
		s.countGets(hits, 0, hint)
		return out, nil
	}
	if testHookMissed != nil {
		testHookMissed()
	}
	l := s.loadTable()
	var (
		own     []K
		ownC    []*loadCall[V]
		waitK   []K
		waitC   []*loadCall[V]
		claimed = make(map[K]bool, len(missed))
		rescued int
	)
	l.mu.Lock()
	for _, k := range missed {
		if claimed[k] {
			continue // a duplicate in keys
		}
		claimed[k] = true
		if c, ok := l.calls[k]; ok {
			waitK, waitC = append(waitK, k), append(waitC, c)
		} else if v, ok := s.Peek(k); ok {
			out[k] = v
			rescued++
		} else {
			c := &loadCall[V]{done: make(chan struct{})}
			l.calls[k] = c
			own, ownC = append(own, k), append(ownC, c)
		}
	}
	l.mu.Unlock()
	s.countGets(hits+rescued, len(missed)-rescued, hint)

	var loadErr error
	if len(own) > 0 {
		loadErr = s.loadAll(ctx, l, own, ownC, load, out)
	}
	if testHookWait != nil && len(waitC) > 0 {
		testHookWait()
	}
	for x, c := range waitC {
		v, err := c.wait(ctx)
		if errors.Is(err, ErrNotLoaded) {
			continue
		}
		if err != nil && loadErr == nil {
			loadErr = err
		}
		if err == nil {
			out[waitK[x]] = v
		}
	}
	if loadErr != nil {
		return nil, loadErr
	}
	return out, nil
}

// loadAll runs a bulk load of keys, registered as the loads calls, stores
// what it returns into out and the cache, and releases the waiters.
func (s *Cache[K, V]) loadAll(ctx context.Context, l *loads[K, V], keys []K, calls []*loadCall[V], load func(context.Context, []K) (map[K]V, error), out map[K]V) error {
	finished := false
	start := time.Now()
	defer func() {
		if !finished {
			s.recordLoad(l, start, true)
			for x, c := range calls {
				c.err = fmt.Errorf("%w: key %v", ErrLoadPanicked, keys[x])
				l.end(keys[x], c)
			}
		}
	}()
	got, err := load(ctx, keys)
	finished = true
	s.recordLoad(l, start, err != nil)
	for x, k := range keys {
		c := calls[x]
		if err != nil {
			c.err = err
		} else if v, ok := got[k]; ok {
			s.Set(k, v)
			c.val = v
			out[k] = v
		} else {
			c.err = fmt.Errorf("%w: key %v", ErrNotLoaded, k)
		}
		l.end(k, c)
	}
	return err
}

// loadOne loads k alone through a bulk loader.
func loadOne[K comparable, V any](ctx context.Context, k K, load func(context.Context, []K) (map[K]V, error)) (V, error) {
	got, err := load(ctx, []K{k})
	if err != nil {
		var zero V
		return zero, err
	}
	v, ok := got[k]
	if !ok {
		return v, fmt.Errorf("%w: key %v", ErrNotLoaded, k)
	}
	return v, nil
}

// testHookWait, if set (by tests), is called by a load's caller that is
// about to wait for another's load.
var testHookWait func()

// testHookMissed, if set (by tests), is called by GetOrLoad and
// GetOrLoadAll when their first look has missed a key, before they take
// the loads' lock.
var testHookMissed func()

// end removes c, now complete, from the loads in flight, and releases its
// waiters.
func (l *loads[K, V]) end(k K, c *loadCall[V]) {
	l.mu.Lock()
	if l.calls[k] == c {
		delete(l.calls, k)
	}
	l.mu.Unlock()
	close(c.done)
}

// wait waits for c's result or for ctx to end.
func (c *loadCall[V]) wait(ctx context.Context) (V, error) {
	select {
	case <-c.done:
		return c.val, c.err
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}
