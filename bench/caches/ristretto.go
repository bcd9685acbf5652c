package caches

import (
	"fmt"

	"github.com/dgraph-io/ristretto/v2"
)

// NewRistretto returns a ristretto v2 cache of at most o.Capacity entries,
// configured as its README advises (see the package documentation). With
// o.Sync every Set waits until ristretto has applied it (Wait), so it is
// neither dropped from a full buffer nor invisible to the next Get; the
// admission policy may still refuse the key.
func NewRistretto[K Key, V any](o Options) (Cache[K, V], error) {
	if err := checkCapacity("ristretto", o); err != nil {
		return nil, err
	}
	c, err := ristretto.NewCache(&ristretto.Config[K, V]{
		NumCounters:        10 * int64(o.Capacity),
		MaxCost:            int64(o.Capacity),
		BufferItems:        64,
		IgnoreInternalCost: true,
	})
	if err != nil {
		return nil, fmt.Errorf("caches: ristretto: %w", err)
	}
	return &ristrettoCache[K, V]{c: c, sync: o.Sync}, nil
}

type ristrettoCache[K Key, V any] struct {
	c    *ristretto.Cache[K, V]
	sync bool
}

func (c *ristrettoCache[K, V]) Name() string { return "ristretto" }

func (c *ristrettoCache[K, V]) Get(key K) (V, bool) { return c.c.Get(key) }

func (c *ristrettoCache[K, V]) Set(key K, value V) {
	c.c.Set(key, value, 1)
	if c.sync {
		c.c.Wait()
	}
}

// Len is the cost in use, which is the number of entries since each costs
// 1 and internal costs are ignored.
func (c *ristrettoCache[K, V]) Len() int {
	return int(c.c.MaxCost() - c.c.RemainingCost())
}

func (c *ristrettoCache[K, V]) Close() { c.c.Close() }
