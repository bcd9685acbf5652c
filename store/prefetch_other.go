//go:build !amd64 || purego

package store

import "sync/atomic"

// Prefetching does nothing where there is no assembly for it
// (prefetch_amd64.go).

const havePrefetch = false

func prefetchBuckets[K comparable, V any](t *table[K, V], lo, hi uint64) {}

func prefetchKey[K comparable](k *K, strKeys bool) {}

func prefetchWord(w *atomic.Uint32) {}

func prefetchBucket[K comparable, V any](b bref[K, V]) {}

func prefetchCacheBucket[K comparable, V any](b *cacheBucket[K, V]) {}

func bigCacheTable[K comparable, V any](n uint64) bool { return false }

func bigMapTable[K comparable, V any](n uint64) bool { return false }

func prefetchGroup[K comparable, V any](g *group[K, V]) {}

func prefetchSlot[K comparable, V any](e *slot[K, V]) {}

func prefetchCacheHeader[K comparable, V any](b *cacheBucket[K, V]) {}
