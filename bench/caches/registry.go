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
}

// Peers returns every cache the harness compares, in report order.
func Peers[K Key, V any]() []Peer[K, V] {
	return append(twochoicePeers[K, V](), []Peer[K, V]{
		{"otter", true, NewOtter[K, V]},
		{"ristretto", true, NewRistretto[K, V]},
		{"lru", true, NewLRU[K, V]},
		{"arc", true, NewARC[K, V]},
		{"2q", true, New2Q[K, V]},
		{"map", false, NewMap[K, V]},
		{"syncmap", false, NewSyncMap[K, V]},
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
