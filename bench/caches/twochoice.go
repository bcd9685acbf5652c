package caches

import (
	"fmt"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/store"
)

// twochoiceSeed fixes the store's seed in the harness (unless
// Options.Seed gives another) so that a run is replayable: the same
// workload and capacity give the same hit ratio.
const twochoiceSeed = 1

// MapName is the name of the unbounded twochoice map among the peers:
// a map, not a cache, so its hit ratio is the ceiling and its speed the
// baseline next to the Go maps.
const MapName = "twochoice-map"

// CacheName is the name of twochoice's cache under its default rule
// (go-left, two choices): the bounded peer compared with the other caches.
const CacheName = "twochoice-goleft"

// twochoicePeers returns the unbounded map (MapName, go-left, for
// throughput runs against the maps) and one bounded cache per placement
// rule, "twochoice-<rule>".
func twochoicePeers[K Key, V any]() []Peer[K, V] {
	ps := []Peer[K, V]{{Name: MapName, Bounded: false, New: func(o Options) (Cache[K, V], error) {
		if o.Capacity < 0 {
			return nil, fmt.Errorf("%w: twochoice with capacity %d", ErrCapacity, o.Capacity)
		}
		return NewTwochoice[K, V](bucket.GoLeft, Options{Sync: o.Sync})
	}}}
	for _, rule := range bucket.Placements() {
		name := "twochoice-" + rule.String()
		ps = append(ps, Peer[K, V]{Name: name, Bounded: true, Seeded: true, New: func(o Options) (Cache[K, V], error) {
			if err := checkCapacity(name, o); err != nil {
				return nil, err
			}
			return NewTwochoice[K, V](rule, o)
		}})
	}
	return ps
}

// NewTwochoice returns a twochoice cache under rule, bounded to o.Capacity
// entries, or with o.Capacity 0 the unbounded map (go-left, whatever rule
// says), hashed under o.Seed (twochoiceSeed if 0). Neither needs
// background work, so o.Sync changes nothing.
func NewTwochoice[K Key, V any](rule bucket.Placement, o Options) (Cache[K, V], error) {
	if o.Capacity < 0 {
		return nil, fmt.Errorf("%w: twochoice with capacity %d", ErrCapacity, o.Capacity)
	}
	d := 2
	if rule == bucket.OneChoice {
		d = 1
	}
	seed := o.Seed
	if seed == 0 {
		seed = twochoiceSeed
	}
	if o.Capacity == 0 {
		m, err := store.NewMap[K, V](store.MapOptions{Seed: seed})
		if err != nil {
			return nil, fmt.Errorf("caches: twochoice: %w", err)
		}
		return &twochoiceCache[K, V]{kv: m, name: MapName}, nil
	}
	s, err := store.NewCache(store.CacheOptions[K, V]{
		MaxEntries: o.Capacity,
		Placement:  rule,
		Choices:    d,
		Seed:       seed,
		Ranking:    o.Ranking,
	})
	if err != nil {
		return nil, fmt.Errorf("caches: twochoice-%v: %w", rule, err)
	}
	return &twochoiceCache[K, V]{kv: s, name: "twochoice-" + rule.String()}, nil
}

// twochoiceKV is what the adapter needs of a store.Map or a store.Cache.
type twochoiceKV[K Key, V any] interface {
	Get(K) (V, bool)
	Set(K, V)
	Len() int
	Report() *store.Report
}

type twochoiceCache[K Key, V any] struct {
	kv   twochoiceKV[K, V]
	name string
}

func (c *twochoiceCache[K, V]) Name() string        { return c.name }
func (c *twochoiceCache[K, V]) Get(key K) (V, bool) { return c.kv.Get(key) }
func (c *twochoiceCache[K, V]) Set(key K, value V)  { c.kv.Set(key, value) }
func (c *twochoiceCache[K, V]) Len() int            { return c.kv.Len() }
func (c *twochoiceCache[K, V]) Close()              {}

// Report returns the load report of the store behind a twochoice adapter,
// or nil for any other cache.
func Report[K Key, V any](c Cache[K, V]) *store.Report {
	if t, ok := c.(*twochoiceCache[K, V]); ok {
		return t.kv.Report()
	}
	return nil
}

// Policy returns the state of the eviction policy of the store behind a
// twochoice cache adapter, or nil for an unbounded map or any other cache.
func Policy[K Key, V any](c Cache[K, V]) *store.PolicyState {
	if t, ok := c.(*twochoiceCache[K, V]); ok {
		if p, ok := t.kv.(interface{ Policy() store.PolicyState }); ok {
			ps := p.Policy()
			return &ps
		}
	}
	return nil
}
