package caches

import (
	"fmt"

	"github.com/maypok86/otter/v2"
)

// NewOtter returns an otter v2 cache of at most o.Capacity entries
// (MaximumSize), sized for them up front (InitialCapacity, which also sizes
// the frequency sketch at once rather than when the cache is half full),
// with otter's defaults otherwise. With o.Sync, maintenance (applying
// buffered reads and writes to the policy, evicting) runs on the goroutine
// that triggers it instead of a new one. Both choices are those of otter's
// own hit-ratio simulator (benchmarks/simulator in otter's repository).
// They do not reproduce the otter row of the OLTP reference table, and no
// other deterministic configuration does (see the package documentation).
func NewOtter[K Key, V any](o Options) (Cache[K, V], error) {
	if err := checkCapacity("otter", o); err != nil {
		return nil, err
	}
	opts := &otter.Options[K, V]{MaximumSize: o.Capacity, InitialCapacity: o.Capacity}
	if o.Sync {
		opts.Executor = func(fn func()) { fn() }
	}
	c, err := otter.New(opts)
	if err != nil {
		return nil, fmt.Errorf("caches: otter: %w", err)
	}
	return &otterCache[K, V]{c: c}, nil
}

type otterCache[K Key, V any] struct {
	c *otter.Cache[K, V]
}

func (c *otterCache[K, V]) Name() string { return "otter" }

func (c *otterCache[K, V]) Get(key K) (V, bool) { return c.c.GetIfPresent(key) }

func (c *otterCache[K, V]) Set(key K, value V) { c.c.Set(key, value) }

func (c *otterCache[K, V]) Len() int { return c.c.EstimatedSize() }

func (c *otterCache[K, V]) Close() { c.c.StopAllGoroutines() }
