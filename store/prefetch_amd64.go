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

// prefetchBuckets prefetches buckets lo to hi-1 of t, which lie in one
// chunk.
func prefetchBuckets[K comparable, V any](t *table[K, V], lo, hi uint64) {
	if lo < hi {
		b := t.bucket(lo)
		prefetchRange(unsafe.Pointer(b), uintptr(hi-lo)*unsafe.Sizeof(*b))
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

// prefetch5 fetches the line of each of five addresses, in one call: the
// first and third with PREFETCHW, which fetches the line for writing
// (exclusive, so that a later compare-and-swap on it needs no second
// trip to take it from other cores' caches), the others with PREFETCHT0.
//
//go:noescape
func prefetch5(a, b, c, d, e unsafe.Pointer)

// prefetchSet fetches the cache lines that a cache Set reads first: the
// control words and policy words of the candidates cs and the sketch word
// w. Prefetches rather than loads, because the Set's first locked
// instruction (a bucket's lock) waits for every load before it to
// complete, and an update needs only the lines of the bucket that holds
// its key: with loads, it waited for the sketch's line and the other
// candidate's lines too, which only an insert reads.
func prefetchSet[K comparable, V any](t *table[K, V], cs []uint64, w *atomic.Uint64) {
	if len(cs) == 2 {
		// The buckets' first lines, with their sync words, for writing:
		// an update or insert takes the lock there. Measured on
		// BenchmarkCacheSetRatio at 1/10, 2 goroutines (x-peer medians of
		// 4 interleaved runs): loads 0.566, PREFETCHT0 0.536, PREFETCHW
		// on the bucket lines 0.502, PREFETCHW on the policy words' lines
		// as well 0.551.
		i0, i1 := cs[0], cs[1]
		prefetch5(unsafe.Pointer(t.bucket(i0)), unsafe.Pointer(&t.meta[i0]),
			unsafe.Pointer(t.bucket(i1)), unsafe.Pointer(&t.meta[i1]), unsafe.Pointer(w))
		return
	}
	prefetchRange(unsafe.Pointer(w), 1)
	for _, i := range cs {
		prefetchRange(unsafe.Pointer(t.bucket(i)), 1)
		prefetchRange(unsafe.Pointer(&t.meta[i]), 1)
	}
}
