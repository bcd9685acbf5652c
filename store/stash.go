package store

import (
	"sync"
	"sync/atomic"
)

// stash holds the keys of a table whose candidates were all full when they
// arrived. It is a Go map behind its own lock: O(1) per operation for any
// keys (the Go map hashes with a per-process random seed of its own), small
// (past [table.stashBound] the store re-keys the table, flood.go) and
// rarely read, because a lookup
// visits it only when the stash hint of the key's first candidate is set,
// that is when some stashed key has that bucket as its first candidate.
// A stashed key stays in the stash until it is deleted or the table grows.
type stash[K comparable, V any] struct {
	mu   sync.RWMutex
	m    map[K]V
	size atomic.Int64 // len(m), readable without the lock
}

func (s *stash[K, V]) get(k K) (V, bool) {
	s.mu.RLock()
	v, ok := s.m[k]
	s.mu.RUnlock()
	return v, ok
}

// has is get for writers, who are serialized and so need no lock to read.
func (s *stash[K, V]) has(k K) bool {
	_, ok := s.m[k]
	return ok
}

func (s *stash[K, V]) put(k K, v V) {
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[K]V)
	}
	s.m[k] = v
	s.size.Store(int64(len(s.m)))
	s.mu.Unlock()
}

func (s *stash[K, V]) remove(k K) {
	s.mu.Lock()
	delete(s.m, k)
	s.size.Store(int64(len(s.m)))
	s.mu.Unlock()
}

// peek is get for writers.
func (s *stash[K, V]) peek(k K) (V, bool) {
	v, ok := s.m[k]
	return v, ok
}

// reset makes es the stash's contents: a growth drops keys not equal to
// themselves (NaNs) this way, which delete cannot remove.
func (s *stash[K, V]) reset(es []slot[K, V]) {
	m := make(map[K]V, len(es))
	for _, e := range es {
		m[e.key] = e.val
	}
	s.mu.Lock()
	s.m = m
	s.size.Store(int64(len(m)))
	s.mu.Unlock()
}

func (s *stash[K, V]) len() int { return int(s.size.Load()) }

// entries copies the stash under its read lock.
func (s *stash[K, V]) entries() []slot[K, V] {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]slot[K, V], 0, len(s.m))
	for k, v := range s.m {
		out = append(out, slot[K, V]{key: k, val: v})
	}
	return out
}
