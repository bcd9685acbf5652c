//go:build !purego

package store

import "unsafe"

// chunkElem returns element i of a chunked array: chunks[i>>chunkBits]
// [i&(chunkSize-1)], without the two bounds checks that indexing pays.
// Every caller passes a bucket number below the table's size, whose chunk
// is allocated (a map's table is used only once allocRest has run, a
// cache's is allocated whole, and the geometry reduces every candidate
// below the size), so the checks never
// fail, and on a Get they are half the instructions that find the
// candidates' headers and the slot (cachegrind, a Map of 200k string keys,
// Zipf 1.01: 58 → 31 a Get). The purego build indexes
// (chunkelem_purego.go), and the tests run both.
func chunkElem[T any](chunks [][]T, i uint64) *T {
	c := *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(chunks)), uintptr(i>>chunkBits)*unsafe.Sizeof(chunks[0])))
	var zero T
	return (*T)(unsafe.Add(c, uintptr(i&(chunkSize-1))*unsafe.Sizeof(zero)))
}
