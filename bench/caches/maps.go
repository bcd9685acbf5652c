package caches

import (
	"fmt"
	"sync"
)

// NewMap returns a Go map guarded by a sync.RWMutex: Get takes the read
// lock, Set the write lock. It never evicts (see the package documentation
// for its role). The capacity in o is not used, not even as a size hint, so
// the map grows as users' maps do.
func NewMap[K Key, V any](o Options) (Cache[K, V], error) {
	if o.Capacity < 0 {
		return nil, fmt.Errorf("%w: map with capacity %d", ErrCapacity, o.Capacity)
	}
	return &mapCache[K, V]{m: make(map[K]V)}, nil
}

type mapCache[K Key, V any] struct {
	mu sync.RWMutex
	m  map[K]V
}

func (c *mapCache[K, V]) Name() string { return "map" }

func (c *mapCache[K, V]) Get(key K) (V, bool) {
	c.mu.RLock()
	v, ok := c.m[key]
	c.mu.RUnlock()
	return v, ok
}

func (c *mapCache[K, V]) Set(key K, value V) {
	c.mu.Lock()
	c.m[key] = value
	c.mu.Unlock()
}

func (c *mapCache[K, V]) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

func (c *mapCache[K, V]) Close() {}

// NewSyncMap returns a sync.Map. It never evicts. Its values are stored as
// interfaces, so a Set of a non-pointer value allocates: that is the cost
// of sync.Map users pay.
func NewSyncMap[K Key, V any](o Options) (Cache[K, V], error) {
	if o.Capacity < 0 {
		return nil, fmt.Errorf("%w: syncmap with capacity %d", ErrCapacity, o.Capacity)
	}
	return &syncMap[K, V]{}, nil
}

type syncMap[K Key, V any] struct {
	m sync.Map
}

func (c *syncMap[K, V]) Name() string { return "syncmap" }

func (c *syncMap[K, V]) Get(key K) (V, bool) {
	v, ok := c.m.Load(key)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

func (c *syncMap[K, V]) Set(key K, value V) { c.m.Store(key, value) }

// Len counts the entries by ranging over them: sync.Map keeps no count,
// and a counter of our own would add a shared atomic to every Set.
func (c *syncMap[K, V]) Len() int {
	n := 0
	c.m.Range(func(_, _ any) bool { n++; return true })
	return n
}

func (c *syncMap[K, V]) Close() {}
