package caches

import (
	"fmt"

	"github.com/hashicorp/golang-lru/arc/v2"
	lru "github.com/hashicorp/golang-lru/v2"
)

// The caches of hashicorp/golang-lru lock one mutex per call.

// NewLRU returns golang-lru's LRU cache of o.Capacity entries.
func NewLRU[K Key, V any](o Options) (Cache[K, V], error) {
	if err := checkCapacity("lru", o); err != nil {
		return nil, err
	}
	c, err := lru.New[K, V](o.Capacity)
	if err != nil {
		return nil, fmt.Errorf("caches: lru: %w", err)
	}
	return lruCache[K, V]{c}, nil
}

type lruCache[K Key, V any] struct{ c *lru.Cache[K, V] }

func (c lruCache[K, V]) Name() string        { return "lru" }
func (c lruCache[K, V]) Get(key K) (V, bool) { return c.c.Get(key) }
func (c lruCache[K, V]) Set(key K, value V)  { c.c.Add(key, value) }
func (c lruCache[K, V]) Len() int            { return c.c.Len() }
func (c lruCache[K, V]) Close()              {}

// New2Q returns golang-lru's 2Q cache of o.Capacity entries, with its
// default split: a quarter of the entries for keys seen once, and ghost
// entries (keys only) for half the capacity, but at least one: lru.New2Q
// rounds half of a capacity of 1 down to no ghost entry, and refuses it.
func New2Q[K Key, V any](o Options) (Cache[K, V], error) {
	if err := checkCapacity("2q", o); err != nil {
		return nil, err
	}
	ghosts := max(lru.Default2QGhostEntries, 1/float64(o.Capacity))
	c, err := lru.New2QParams[K, V](o.Capacity, lru.Default2QRecentRatio, ghosts)
	if err != nil {
		return nil, fmt.Errorf("caches: 2q: %w", err)
	}
	return twoQCache[K, V]{c}, nil
}

type twoQCache[K Key, V any] struct{ c *lru.TwoQueueCache[K, V] }

func (c twoQCache[K, V]) Name() string        { return "2q" }
func (c twoQCache[K, V]) Get(key K) (V, bool) { return c.c.Get(key) }
func (c twoQCache[K, V]) Set(key K, value V)  { c.c.Add(key, value) }
func (c twoQCache[K, V]) Len() int            { return c.c.Len() }
func (c twoQCache[K, V]) Close()              {}

// NewARC returns golang-lru's ARC cache of o.Capacity entries (it also
// remembers up to o.Capacity evicted keys as ghosts).
func NewARC[K Key, V any](o Options) (Cache[K, V], error) {
	if err := checkCapacity("arc", o); err != nil {
		return nil, err
	}
	c, err := arc.NewARC[K, V](o.Capacity)
	if err != nil {
		return nil, fmt.Errorf("caches: arc: %w", err)
	}
	return arcCache[K, V]{c}, nil
}

type arcCache[K Key, V any] struct{ c *arc.ARCCache[K, V] }

func (c arcCache[K, V]) Name() string        { return "arc" }
func (c arcCache[K, V]) Get(key K) (V, bool) { return c.c.Get(key) }
func (c arcCache[K, V]) Set(key K, value V)  { c.c.Add(key, value) }
func (c arcCache[K, V]) Len() int            { return c.c.Len() }
func (c arcCache[K, V]) Close()              {}
