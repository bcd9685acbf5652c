//go:build !purego && !race

package store

import (
	"sync/atomic"
	"unsafe"
)

// Relaxed writes: what a cache writer stores while it holds a bucket
// exclusively, and the ghost's words.
//
// On amd64 every atomic store is an XCHG, a locked instruction: it waits
// for every earlier load and store, and if its cache line is not in the
// core's cache it stalls the core until the line arrives. A cache Set
// made five to eight of them per insert (slot words, control word, policy
// word, expiry), each on a line of its own. Plain stores of aligned words
// instead go through the store buffer, their cache misses overlap, and a
// single locked instruction at the end (the bucket's unlock) publishes
// them all.
//
// Why plain stores are enough here, in this build:
//
//   - Under a bucket's exclusive lock (the writer bit, taken with a
//     compare-and-swap), no other writer touches the bucket's slots,
//     control word or metadata; readers only load them (and compare-and-
//     swap a policy word, which then fails or is overwritten, as with an
//     atomic store). Optimistic readers validate what they read against
//     the sync word, which the unlock moves on with an atomic add after
//     these stores; a reader that sees a half-written bucket discards it.
//     This is the writer side of a seqlock.
//   - An aligned 8-byte store is never torn on amd64, and the compiler emits one store per word here (word by
//     word through unsafe, never a struct copy, which could use wider or
//     narrower moves): a racing atomic load sees the old word or the new
//     one, and a pointer word is always a whole pointer (with the usual
//     write barrier, so the garbage collector misses nothing).
//   - The Go compiler does not move memory operations across the atomic
//     operations of the lock and the unlock, and amd64 makes stores
//     visible in program order, after the locked compare-and-swap that
//     took the writer bit: a reader that sees any of these stores sees
//     the writer bit or a later version, and retries. (On arm64 plain
//     stores may become visible before the store that took the lock,
//     and Go offers no store-store barrier to prevent it, so arm64 keeps
//     its atomic stores, which are store-releases there and wait for
//     nothing.)
//
// The race detector cannot know any of this, so race builds (and purego
// builds, which read under locks and have no unsafe, and other
// architectures) use atomic stores (relaxed_other.go).

// storeRelaxed stores v into *p; see above for when that is allowed.
func storeRelaxed(p *atomic.Uint64, v uint64) { *(*uint64)(unsafe.Pointer(p)) = v }

// storeRelaxed32 is storeRelaxed for a uint32.
func storeRelaxed32(p *atomic.Uint32, v uint32) { *(*uint32)(unsafe.Pointer(p)) = v }

// storeRelaxedInt64 is storeRelaxed for an int64.
func storeRelaxedInt64(p *atomic.Int64, v int64) { *(*int64)(unsafe.Pointer(p)) = v }

// writeSlotLocked is storeSlot for a writer that holds the bucket
// exclusively: the same words, with plain stores.
func writeSlotLocked[K comparable, V any](dst, src *slot[K, V], from int, l wordLayout) {
	d, s := unsafe.Pointer(dst), unsafe.Pointer(src)
	ptrs := l.ptrs >> from
	for off := uintptr(from) * wordSize; off < uintptr(l.words)*wordSize; off += wordSize {
		if ptrs&1 != 0 {
			*(*unsafe.Pointer)(unsafe.Add(d, off)) = *(*unsafe.Pointer)(unsafe.Add(s, off))
		} else {
			*(*uintptr)(unsafe.Add(d, off)) = *(*uintptr)(unsafe.Add(s, off))
		}
		ptrs >>= 1
	}
}

// storeRelease stores v into *p for a writer that is the only one writing
// *p (see syncWord.unlockAlone). On amd64 an atomic store is an XCHG,
// which waits for every earlier store to reach the cache: a cache Set's
// unlock would wait there for the cache miss of the slot it has just
// written.
// A plain store needs no such wait, and is enough: amd64 makes stores
// visible in program order (total store order), so a reader that sees
// this store sees every store before it, which is all that a seqlock's
// release needs; the Go compiler keeps the stores in program order and
// does not move them across the atomic operations around them. Race
// builds use the atomic store (relaxed_other.go).
func storeRelease(p *atomic.Uint64, v uint64) { *(*uint64)(unsafe.Pointer(p)) = v }
