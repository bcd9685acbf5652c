//go:build !purego && !race

package store

import (
	"sync/atomic"
	"unsafe"
)

// storeRelease stores v into *p for a writer that is the only one writing
// *p (see syncWord.unlockAlone). On amd64 an atomic store is an XCHG,
// which waits for every earlier store to reach the cache: a cache Set's
// unlock waited there for the cache miss of the slot it had just written.
// A plain store needs no such wait, and is enough: amd64 makes stores
// visible in program order (total store order), so a reader that sees
// this store sees every store before it, which is all that a seqlock's
// release needs; the Go compiler keeps the stores in program order and
// does not move them across the atomic operations around them. Race
// builds use the atomic store (release_other.go).
func storeRelease(p *atomic.Uint64, v uint64) { *(*uint64)(unsafe.Pointer(p)) = v }
