package caches

import (
	"errors"
	"fmt"
)

// Key is the constraint on the keys of the harness: integers (trace block
// numbers and generators' ranks) and strings (key files). ristretto accepts
// only a fixed set of key types, of which these two, so the interface
// cannot be generic over any comparable type.
type Key interface {
	~uint64 | ~string
}

// Cache is what the harness sees of a cache. Implementations are safe for
// concurrent use.
type Cache[K Key, V any] interface {
	// Name identifies the cache in reports and on the command line, as in
	// "otter" or "lru".
	Name() string
	// Get returns the value cached under key and true, or false if there
	// is none.
	Get(key K) (V, bool)
	// Set caches value under key, evicting what the cache's policy
	// chooses. A cache with an admission policy (otter, ristretto) may
	// refuse to keep the key; ristretto may also drop the Set unless
	// Options.Sync is set.
	Set(key K, value V)
	// Len returns the number of entries. It may take time proportional to
	// them and is approximate under concurrent use: keep it off hot paths.
	Len() int
	// Close releases the cache's goroutines, if it has any. The cache must
	// not be used afterwards.
	Close()
}

// Options configure an adapter. The zero value is an unbounded,
// asynchronous cache, which only the unbounded peers accept.
type Options struct {
	// Capacity is the most entries a bounded cache holds; bounded peers
	// require it to be positive. Unbounded peers ignore it.
	Capacity int
	// Sync makes a cache finish deferred work before each call returns
	// (see the package documentation). Hit-ratio runs set it.
	Sync bool
	// Seed is the hash seed of a cache that takes one (Peer.Seeded); 0
	// means the harness's fixed seed, so that a run replays exactly.
	Seed uint64
	// Ranking pins a twochoice cache's eviction ranking
	// (store.CacheOptions.Ranking); empty lets it adapt. Other caches
	// ignore it.
	Ranking string
}

// The errors of the package.
var (
	// ErrCapacity: a bounded cache was asked for a capacity < 1, or any
	// cache for a negative one.
	ErrCapacity = errors.New("caches: capacity must be positive")
	// ErrUnknown: no peer has the name given to Lookup.
	ErrUnknown = errors.New("caches: unknown cache")
)

// checkCapacity validates o for a bounded cache.
func checkCapacity(name string, o Options) error {
	if o.Capacity < 1 {
		return fmt.Errorf("%w: %s with capacity %d", ErrCapacity, name, o.Capacity)
	}
	return nil
}
