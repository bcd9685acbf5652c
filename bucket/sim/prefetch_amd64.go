//go:build amd64 && !purego

package sim

// prefetch asks the processor to bring base[i] into the cache for every i
// in idx (PREFETCHT0). Unlike a load, a prefetch retires at once, so a
// batch of misses does not hold up the instructions after it; the pure-Go
// twin (prefetch_other.go) touches the bytes instead.
//
//go:noescape
func prefetch(base *byte, idx []uint64)

// hasPrefetch reports whether prefetch is the instruction, not a touch.
const hasPrefetch = true
