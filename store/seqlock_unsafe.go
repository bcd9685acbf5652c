//go:build !purego

package store

import (
	"sync/atomic"
	"unsafe"
)

// Optimistic reads copy a slot word by word, each word with one atomic
// load, between two loads of the bucket's sync word (bucketOf.readMatch).
// Why this is sound, for the layouts that layoutOf vouches for:
//
//   - Each word is read atomically, so it holds a value some writer stored
//     whole: pointer words are loaded with atomic.LoadPointer, so the
//     garbage collector sees every pointer the copy holds, and no word is
//     ever half of two writes. The race detector sees atomic loads against
//     the atomic stores of storeSlot, or against plain stores that happen
//     before the control word that published the slot (bucketOf.put).
//   - The copy may still mix words of different writes (a torn slot). The
//     reader checks the sync word again before it uses the copy in any way
//     that dereferences it: an unchanged word means no writer held or
//     released the bucket meanwhile, so every word came from the one
//     complete write the control word published. Only then does it compare
//     the key, which for strings reads their bytes; Go strings are
//     immutable, so bytes reached through a validated header are the key's.
//   - The slot's memory stays valid throughout: buckets are never freed
//     while a reader holds a pointer to them (the garbage collector sees
//     that pointer), and slots are never resized.
//
// The slot type has word alignment (its leading [0]uint64), so every word
// access is aligned, as atomic operations require.

// optimisticReads says whether this build reads slots optimistically;
// purego builds take the locked path for every type.
const optimisticReads = true

// loadSlot copies *src into *dst with one atomic load per word.
func loadSlot[K comparable, V any](dst, src *slot[K, V], l wordLayout) {
	d, s := unsafe.Pointer(dst), unsafe.Pointer(src)
	ptrs := l.ptrs
	for off := uintptr(0); off < uintptr(l.words)*wordSize; off += wordSize {
		if ptrs&1 != 0 {
			*(*unsafe.Pointer)(unsafe.Add(d, off)) = atomic.LoadPointer((*unsafe.Pointer)(unsafe.Add(s, off)))
		} else {
			*(*uintptr)(unsafe.Add(d, off)) = atomic.LoadUintptr((*uintptr)(unsafe.Add(s, off)))
		}
		ptrs >>= 1
	}
}

// storeSlot copies words from, from+1, … of *src into *dst with one atomic
// store per word, for slots that optimistic readers may be reading.
func storeSlot[K comparable, V any](dst, src *slot[K, V], from int, l wordLayout) {
	d, s := unsafe.Pointer(dst), unsafe.Pointer(src)
	ptrs := l.ptrs >> from
	if from == l.words-1 && ptrs&1 == 0 {
		// One word and no pointer, an update of a value such as an
		// int64: without the loop's set-up, an update's store costs a
		// third of the instructions.
		off := uintptr(from) * wordSize
		atomic.StoreUintptr((*uintptr)(unsafe.Add(d, off)), *(*uintptr)(unsafe.Add(s, off)))
		return
	}
	for off := uintptr(from) * wordSize; off < uintptr(l.words)*wordSize; off += wordSize {
		if ptrs&1 != 0 {
			atomic.StorePointer((*unsafe.Pointer)(unsafe.Add(d, off)), *(*unsafe.Pointer)(unsafe.Add(s, off)))
		} else {
			atomic.StoreUintptr((*uintptr)(unsafe.Add(d, off)), *(*uintptr)(unsafe.Add(s, off)))
		}
		ptrs >>= 1
	}
}

// valueWord returns the first word of a slot that holds part of the
// value: an update rewrites the slot from there.
func valueWord[K comparable, V any]() int {
	var s slot[K, V]
	return int(unsafe.Offsetof(s.val) / wordSize)
}

// stripeHint returns a number that stays the same for one goroutine
// calling from one place and differs between goroutines: the address of a
// variable on its stack, in units of 1 KiB (goroutine stacks are at least
// 2 KiB apart). Counters use it to pick a stripe (counters.go). If the
// stack moves, the goroutine simply moves to another stripe.
func stripeHint() uint64 {
	var x byte
	return uint64(uintptr(unsafe.Pointer(&x))) >> 10
}
