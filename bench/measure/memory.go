package measure

import (
	"fmt"
	"runtime"

	"github.com/twochoice/twochoice/bench/caches"
)

// MemoryResult is the heap a cache took to hold its entries.
type MemoryResult struct {
	Capacity int   // the cache's capacity (ignored by an unbounded cache)
	Inserted int   // distinct keys set
	Entries  int   // entries held at the end (Len)
	Bytes    int64 // growth of the live heap from before the cache was made
}

// BytesPerEntry returns Bytes / Entries.
func (m MemoryResult) BytesPerEntry() float64 {
	if m.Entries == 0 {
		return 0
	}
	return float64(m.Bytes) / float64(m.Entries)
}

// Memory measures the live heap that a peer's cache of the given capacity
// takes once filled: the live heap after a collection, with the cache
// filled, less the live heap after a collection before the cache was made.
// Everything the cache allocates counts (its table, its policy's lists,
// ghost entries and sketches, its buffers), and nothing else: the keys
// themselves are allocated by the caller beforehand, as an application's
// keys are, so a string key costs the cache its 16-byte header only.
//
// A bounded cache is sent 2·capacity distinct keys and an unbounded one
// capacity keys, from keys (which must hold that many distinct ones), with
// Sync so that deferred work is done. Each then holds about capacity
// entries, and a bounded cache has evicted as many: it is in the steady
// state of a full cache, with whatever it remembers of evicted keys. The
// result is divided by the entries held at the end.
//
// Memory returns the cache, still open, so that the caller can look at it
// (the twochoice load report); the caller closes it. Nothing else may
// allocate while Memory runs.
func Memory[K caches.Key](p caches.Peer[K, Value], capacity int, keys []K) (MemoryResult, caches.Cache[K, Value], error) {
	if capacity < 1 {
		return MemoryResult{}, nil, fmt.Errorf("%w: capacity %d", ErrConfig, capacity)
	}
	n := capacity
	if p.Bounded {
		n = 2 * capacity
	}
	if len(keys) < n {
		return MemoryResult{}, nil, fmt.Errorf("%w: %d keys to fill %s at %d", ErrConfig, len(keys), p.Name, capacity)
	}
	before := liveHeap()
	c, err := p.New(caches.Options{Capacity: capacity, Sync: true})
	if err != nil {
		return MemoryResult{}, nil, err
	}
	for i, k := range keys[:n] {
		c.Set(k, value+Value(i))
	}
	after := liveHeap()
	// The keys were live at the first reading: they must be at the second
	// too, or their own bytes come off the cache's.
	runtime.KeepAlive(keys)
	r := MemoryResult{Capacity: capacity, Inserted: n, Entries: c.Len(), Bytes: int64(after) - int64(before)}
	return r, c, nil
}

// liveHeap collects the garbage and returns the bytes of heap objects
// left. Twice: sync.Pool keeps what one collection frees in a victim
// cache until the next, so after a single collection the first reading
// counted pooled buffers (fmt's, say) that the second one had freed, and
// a cache that allocates nothing read as a few hundred bytes negative.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
