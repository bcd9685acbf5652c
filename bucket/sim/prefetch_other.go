//go:build !amd64 || purego

package sim

import "unsafe"

// prefetch touches base[i] for every i in idx, so that the cache misses
// start now (see prefetch_amd64.go).
func prefetch(base *byte, idx []uint64) {
	var s byte
	for _, i := range idx {
		s |= *(*byte)(unsafe.Add(unsafe.Pointer(base), i))
	}
	prefetchSink |= s
}

var prefetchSink byte

// hasPrefetch reports whether prefetch is the instruction, not a touch.
const hasPrefetch = false
