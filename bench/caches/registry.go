package caches

import (
	"fmt"
	"strings"
)

// Peer is a cache the harness knows by name.
type Peer[K Key, V any] struct {
	Name string
	// Bounded reports whether the cache holds at most Options.Capacity
	// entries. The unbounded peers are the throughput baseline and the
	// hit-ratio ceiling, never hit-ratio competitors.
	Bounded bool
	New     func(Options) (Cache[K, V], error)
	// Refuses reports whether the cache may decline to keep a key it is
	// asked to Set (an admission policy: ristretto's TinyLFU compares the
	// new key with the victim and may drop the new one). The others keep
	// every key set, and evict among the rest, so that Belady's optimum
	// with forced insertion bounds their hit ratio, while the optimum with
	// bypass bounds every cache's (package hitratio).
	Refuses bool
	// Random reports whether the cache's hit ratio on a given workload
	// varies from run to run: it draws hash seeds or choices at random
	// (otter, ristretto; see the package documentation). The others
	// replay exactly.
	Random bool
	// Seeded reports whether the cache's hit ratio depends on the hash
	// seed it is given (Options.Seed): twochoice's caches, whose adaptive
	// policy replays a sample of the keys chosen by their hash. One seed
	// replays exactly; several show how much of a figure is the sample's.
	Seeded bool
}

// Peers returns every cache the harness compares, in report order.
func Peers[K Key, V any]() []Peer[K, V] {
	return append(twochoicePeers[K, V](), []Peer[K, V]{
		{Name: "otter", Bounded: true, New: NewOtter[K, V], Random: true},
		{Name: "ristretto", Bounded: true, New: NewRistretto[K, V], Refuses: true, Random: true},
		{Name: "lru", Bounded: true, New: NewLRU[K, V]},
		{Name: "arc", Bounded: true, New: NewARC[K, V]},
		{Name: "2q", Bounded: true, New: New2Q[K, V]},
		{Name: "map", Bounded: false, New: NewMap[K, V]},
		{Name: "syncmap", Bounded: false, New: NewSyncMap[K, V]},
	}...)
}

// Lookup returns the peer with the given name.
func Lookup[K Key, V any](name string) (Peer[K, V], error) {
	var names []string
	for _, p := range Peers[K, V]() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Peer[K, V]{}, fmt.Errorf("%w %q (known: %s)", ErrUnknown, name, strings.Join(names, ", "))
}
