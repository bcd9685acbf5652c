//go:build !purego

package store

import (
	"sync/atomic"
	"unsafe"
)

// prefetchRange asks the CPU to bring the cache lines of the n bytes at p
// into its caches (PREFETCHT0, prefetch_amd64.s). Unlike a load, a
// prefetch does not hold up the instructions after it until its line
// arrives, so many can be in flight while the caller works on something
// else: a load that misses blocks the CPU's in-order retirement, and the
// CPU stalls a couple of hundred instructions later. Go has no prefetch
// intrinsic outside the runtime, hence the assembly. It never faults, so p
// need not be valid past what the caller owns, but callers pass memory
// they own anyway.
//
//go:noescape
func prefetchRange(p unsafe.Pointer, n uintptr)

// havePrefetch says whether the prefetches here do anything; where they
// do not (prefetch_other.go), a caller that must have lines on their way
// loads a word of each instead.
const havePrefetch = true

// prefetchBuckets prefetches buckets lo to hi-1 of t, which lie in one
// chunk.
func prefetchBuckets[K comparable, V any](t *table[K, V], lo, hi uint64) {
	if lo < hi {
		b := t.bucket(lo)
		prefetchRange(unsafe.Pointer(b.bucketHdr), uintptr(hi-lo)*unsafe.Sizeof(*b.bucketHdr))
		prefetchRange(unsafe.Pointer(b.slots), uintptr(hi-lo)*unsafe.Sizeof(*b.slots))
	}
}

// prefetchKey prefetches the first line of a string key's bytes, for
// hashing it later; other keys are in the slot already.
func prefetchKey[K comparable](k *K, strKeys bool) {
	if strKeys {
		if s := keyString(k); len(s) > 0 {
			prefetchRange(unsafe.Pointer(unsafe.StringData(s)), 1)
		}
	}
}

// prefetchWord prefetches the line of a ghost word.
func prefetchWord(w *atomic.Uint32) { prefetchRange(unsafe.Pointer(w), 4) }

// prefetchBucket prefetches every line of bucket b: its header and its
// slots.
func prefetchBucket[K comparable, V any](b bref[K, V]) {
	prefetchRange(unsafe.Pointer(b.bucketHdr), unsafe.Sizeof(*b.bucketHdr))
	prefetchRange(unsafe.Pointer(b.slots), unsafe.Sizeof(*b.slots))
}

// prefetchCacheBucket prefetches every line of a cache's bucket b, its
// policy words included.
func prefetchCacheBucket[K comparable, V any](b *cacheBucket[K, V]) {
	prefetchRange(unsafe.Pointer(b), unsafe.Sizeof(*b))
}

// prefetchSlot prefetches the lines of slot e.
func prefetchSlot[K comparable, V any](e *slot[K, V]) {
	prefetchRange(unsafe.Pointer(e), unsafe.Sizeof(*e))
}

// bigTableBytes is the size of a table's buckets from which a lookup or
// a write prefetches all of its candidates' slots as it loads their
// headers: a table this size is past a core's L2 (512 KiB to 1 MiB on
// current x86 cores), so the slot that a hit or an update finds or an
// insert fills is usually a miss, which the prefetch overlaps with the
// header's instead of following it. Below it the slots mostly stay in L2,
// and prefetching every line of both candidates would only take the
// place of lines the caller needs.
//
// A cache of 100,000 string→int64 entries has 3 MiB of buckets; one of
// 10,000 has 0.3 MiB, which gains nothing from the prefetch
// (BenchmarkCacheGetRatio, BenchmarkCacheSetRatio). A map's slots are an
// array of their own, 192 bytes a bucket for string→int64; 6 alternations
// of builds with and without the prefetch, benchstat's medians: a Get of
// a present key at 1M keys takes 21% less time in steady loops and 25% in
// rounds (BenchmarkGetRatio, real and synthetic keys), at 4M 26% less; an
// insert into a map of 10M keys made with a size hint 42% less
// (BenchmarkSetSized), and a growing fill goes from 2.23 to 1.77 times
// the Go map's time (BenchmarkSetGrowingRatio). What it costs: a Get of
// an absent key, whose candidates' slots it never reads, takes 6% more
// time on one goroutine and 9% on two (BenchmarkGetAbsentRatio, 1M
// keys). At 64k keys (3 MiB of slots) and for updates of a Zipf
// workload's keys, which stay in cache, the difference is within the
// noise.
const bigTableBytes = 1 << 20

// bigCacheTable reports whether a cache's table of n buckets is at least
// bigTableBytes.
func bigCacheTable[K comparable, V any](n uint64) bool {
	return n*uint64(unsafe.Sizeof(cacheBucket[K, V]{})) >= bigTableBytes
}

// bigMapTable reports whether a map's table of n buckets has at least
// bigTableBytes of slots.
func bigMapTable[K comparable, V any](n uint64) bool {
	return n*uint64(unsafe.Sizeof(group[K, V]{})) >= bigTableBytes
}

// prefetchGroup prefetches every line of a map bucket's slots.
func prefetchGroup[K comparable, V any](g *group[K, V]) {
	prefetchRange(unsafe.Pointer(g), unsafe.Sizeof(*g))
}

// prefetchCacheHeader prefetches the policy words and the header of
// cache bucket b, what relocate scans of a bucket it does not hold.
func prefetchCacheHeader[K comparable, V any](b *cacheBucket[K, V]) {
	prefetchRange(unsafe.Pointer(b), unsafe.Offsetof(b.b)+unsafe.Sizeof(b.b.bucketHdr))
}
