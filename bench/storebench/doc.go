// Package storebench measures package store against the maps and caches Go
// programs use today: a Go map behind a sync.RWMutex, a plain Go map where
// only one goroutine writes, and otter v2. It lives outside the library so
// that no peer enters the library's import graph. The benchmarks are in
// storebench_test.go (the map: Get, Set into a growing table, latency,
// memory), absent_test.go (Get of absent keys, BenchmarkGetAbsentRatio),
// intkeys_test.go (uint64 keys with each hash family, BenchmarkIntGetRatio
// and BenchmarkIntSetGrowingRatio) and cache_test.go (the bounded cache
// against otter, BenchmarkCacheSetRatio and BenchmarkCacheGetRatio).
// docs/performance.md gives the method, the commands and the current
// figures.
package storebench
