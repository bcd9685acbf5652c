//go:build !amd64 || purego

package store

import "sync/atomic"

// Prefetching does nothing where there is no assembly for it
// (prefetch_amd64.go).

func prefetchBuckets[K comparable, V any](t *table[K, V], lo, hi uint64) {}

func prefetchKey[K comparable](k *K, strKeys bool) {}

// prefetchSet loads a word of each line that a cache Set reads first, the
// candidates' control and policy words and the sketch word w, before the
// Set's first locked instruction: the loads do not depend on one another,
// so their cache misses overlap instead of following one another.
func prefetchSet[K comparable, V any](t *table[K, V], cs []uint64, w *atomic.Uint64) {
	touched := w.Load()
	for _, i := range cs {
		touched ^= t.bucket(i).ctrl.Load() ^ t.meta[i].acc[0].Load()
	}
	keep(touched)
}
