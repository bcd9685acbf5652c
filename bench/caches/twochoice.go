package caches

import (
	"fmt"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/store"
)

// twochoiceSeed fixes the store's seed in the harness so that a run is
// replayable: the same workload and capacity give the same hit ratio.
const twochoiceSeed = 1

// MapName is the name of the unbounded twochoice store among the peers:
// a map, not a cache, so its hit ratio is the ceiling and its speed the
// baseline next to the Go maps.
const MapName = "twochoice-map"

// CacheName is the name of twochoice's cache under its default rule
// (go-left, two choices): the bounded peer compared with the other caches.
const CacheName = "twochoice-goleft"

// twochoicePeers returns the unbounded store (MapName, go-left, for
// throughput runs against the maps) and one bounded peer per placement
// rule (the store's cache mode), "twochoice-<rule>".
func twochoicePeers[K Key, V any]() []Peer[K, V] {
	ps := []Peer[K, V]{{Name: MapName, Bounded: false, New: func(o Options) (Cache[K, V], error) {
		if o.Capacity < 0 {
			return nil, fmt.Errorf("%w: twochoice with capacity %d", ErrCapacity, o.Capacity)
		}
		c, err := NewTwochoice[K, V](bucket.GoLeft, Options{Sync: o.Sync})
		if err == nil {
			c.(*twochoiceCache[K, V]).name = MapName
		}
		return c, err
	}}}
	for _, rule := range bucket.Placements() {
		name := "twochoice-" + rule.String()
		ps = append(ps, Peer[K, V]{Name: name, Bounded: true, New: func(o Options) (Cache[K, V], error) {
			if err := checkCapacity(name, o); err != nil {
				return nil, err
			}
			return NewTwochoice[K, V](rule, o)
		}})
	}
	return ps
}

// NewTwochoice returns a twochoice store under rule, bounded to o.Capacity
// entries (0: unbounded). The store needs no background work, so o.Sync
// changes nothing.
func NewTwochoice[K Key, V any](rule bucket.Placement, o Options) (Cache[K, V], error) {
	if o.Capacity < 0 {
		return nil, fmt.Errorf("%w: twochoice with capacity %d", ErrCapacity, o.Capacity)
	}
	d := 2
	if rule == bucket.OneChoice {
		d = 1
	}
	s, err := store.New[K, V](store.Options{
		MaxEntries: o.Capacity,
		Placement:  rule,
		Choices:    d,
		Seed:       twochoiceSeed,
	})
	if err != nil {
		return nil, fmt.Errorf("caches: twochoice-%v: %w", rule, err)
	}
	return &twochoiceCache[K, V]{s: s, name: "twochoice-" + rule.String()}, nil
}

type twochoiceCache[K Key, V any] struct {
	s    *store.Store[K, V]
	name string
}

func (c *twochoiceCache[K, V]) Name() string        { return c.name }
func (c *twochoiceCache[K, V]) Get(key K) (V, bool) { return c.s.Get(key) }
func (c *twochoiceCache[K, V]) Set(key K, value V)  { c.s.Set(key, value) }
func (c *twochoiceCache[K, V]) Len() int            { return c.s.Len() }
func (c *twochoiceCache[K, V]) Close()              {}

// Store returns the store behind a twochoice adapter, for its load report,
// or nil for any other cache.
func Store[K Key, V any](c Cache[K, V]) *store.Store[K, V] {
	if t, ok := c.(*twochoiceCache[K, V]); ok {
		return t.s
	}
	return nil
}
