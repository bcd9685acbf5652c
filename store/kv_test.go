package store

import (
	"context"
	"errors"
	"iter"
	"testing"
	"time"
)

// Options is, in tests, the options of either type in one struct, for the
// tests that run the same checks on a Map and a Cache: MaxEntries > 0
// makes a cache (New, Open, newTestStore).
type Options = config

// kv is what the tests that run on both types ask of a store.
type kv[K comparable, V any] interface {
	Get(k K) (V, bool)
	Set(k K, v V)
	GetOrSet(k K, v V) (V, bool)
	Delete(k K) bool
	Len() int
	Clear()
	All() iter.Seq2[K, V]
	Keys() iter.Seq[K]
	Values() iter.Seq[V]
	Stats() Stats
	Report() *Report
	Seed() uint64
	Save(path string) error
	SaveProgress(path string, progress func(done, total uint64)) error
	SaveContext(ctx context.Context, path string, progress func(done, total uint64)) error
	checkInvariants() error
	options() Options // the options in use, with the hash function in use
	hashOf(k K) uint64
}

var (
	_ kv[int, int] = (*Map[int, int])(nil)
	_ kv[int, int] = (*Cache[int, int])(nil)
)

// New returns a cache if o.MaxEntries > 0, else a map.
func New[K comparable, V any](o Options) (kv[K, V], error) {
	if o.MaxEntries > 0 {
		c, err := NewCache(cacheOptionsOf[K, V](&o))
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	if o.MaxEntries < 0 {
		return nil, ErrOptions
	}
	m, err := NewMap[K, V](o.mapOptions())
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Open opens a snapshot of either type: a cache's if o (nil: none given)
// names a bound or the file holds one.
func Open[K comparable, V any](path string, o *Options) (kv[K, V], error) {
	if o != nil && o.MaxEntries > 0 {
		co := cacheOptionsOf[K, V](o)
		c, err := OpenCache[K, V](path, &co)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	var mo *MapOptions
	if o != nil {
		x := o.mapOptions()
		mo = &x
	}
	m, err := OpenMap[K, V](path, mo)
	if err == nil {
		return m, nil
	}
	var co *CacheOptions[K, V]
	if o != nil {
		x := cacheOptionsOf[K, V](o)
		co = &x
	}
	if !errors.Is(err, ErrOptionsMismatch) {
		return nil, err
	}
	c, err := OpenCache[K, V](path, co)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// newTestStore builds a store of either type and registers the invariant
// checker to run when the test ends, as bbolt's tests run db.MustCheck.
func newTestStore[K comparable, V any](tb testing.TB, o Options) kv[K, V] {
	tb.Helper()
	s, err := New[K, V](o)
	if err != nil {
		tb.Fatalf("New(%+v): %v", o, err)
	}
	checkAtEnd(tb, s)
	return s
}

// newTestMap is newTestStore for a map.
func newTestMap[K comparable, V any](tb testing.TB, o MapOptions) *Map[K, V] {
	tb.Helper()
	s, err := NewMap[K, V](o)
	if err != nil {
		tb.Fatalf("NewMap(%+v): %v", o, err)
	}
	checkAtEnd(tb, s)
	return s
}

// newTestCache is newTestStore for a cache.
func newTestCache[K comparable, V any](tb testing.TB, o CacheOptions[K, V]) *Cache[K, V] {
	tb.Helper()
	s, err := NewCache[K, V](o)
	if err != nil {
		tb.Fatalf("NewCache(%+v): %v", o, err)
	}
	checkAtEnd(tb, s)
	return s
}

func checkAtEnd(tb testing.TB, s interface{ checkInvariants() error }) {
	tb.Cleanup(func() {
		if err := s.checkInvariants(); err != nil {
			tb.Errorf("invariants: %v", err)
		}
	})
}

// resolve resolves test options as the constructor of their type would.
func (o config) resolve() (config, error) {
	if o.MaxEntries != 0 {
		return resolveCache(o)
	}
	return o.mapOptions().resolve()
}

func (s *Map[K, V]) options() Options   { return s.configOf(s.tabs.Load().cur) }
func (s *Cache[K, V]) options() Options { return s.configOf(s.tab.Load()) }

// newTestCacheOf is newTestCache for options in the tests' common form.
func newTestCacheOf[K comparable, V any](tb testing.TB, o Options) *Cache[K, V] {
	tb.Helper()
	return newTestCache(tb, cacheOptionsOf[K, V](&o))
}

// newTestMapOf is newTestMap for options in the tests' common form.
func newTestMapOf[K comparable, V any](tb testing.TB, o Options) *Map[K, V] {
	tb.Helper()
	return newTestMap[K, V](tb, o.mapOptions())
}

// cfgOf returns a pointer to a copy of s's options, for the package's
// functions of options.
func cfgOf(s interface{ options() Options }) *config {
	o := s.options()
	return &o
}

func (s *Map[K, V]) hashOf(k K) uint64   { return s.hash(k) }
func (s *Cache[K, V]) hashOf(k K) uint64 { return s.hash(k) }

// setWithTTL is SetWithTTL on a cache, and Set on a map.
func setWithTTL[K comparable, V any](s kv[K, V], k K, v V, ttl time.Duration) {
	if c, ok := s.(*Cache[K, V]); ok {
		c.SetWithTTL(k, v, ttl)
		return
	}
	s.Set(k, v)
}

// currentTable returns the table s writes to.
func currentTable[K comparable, V any](s kv[K, V]) visited[K, V] {
	if m, ok := s.(*Map[K, V]); ok {
		return m.tabs.Load().cur
	}
	return s.(*Cache[K, V]).tab.Load()
}
