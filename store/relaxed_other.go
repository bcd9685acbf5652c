//go:build !amd64 || purego || race

package store

import "sync/atomic"

// The atomic twins of relaxed_amd64.go, for race builds (the race
// detector would report the plain stores), purego builds and the
// architectures whose stores may become visible out of order.

func storeRelaxed(p *atomic.Uint64, v uint64) { p.Store(v) }

func storeRelaxed32(p *atomic.Uint32, v uint32) { p.Store(v) }

func storeRelaxedInt64(p *atomic.Int64, v int64) { p.Store(v) }

func writeSlotLocked[K comparable, V any](dst, src *slot[K, V], from int, l wordLayout) {
	storeSlot(dst, src, from, l)
}

// storeRelease is an atomic store where relaxed_amd64.go does not apply
// (on arm64 it is a store-release, with no wait for earlier stores).
func storeRelease(p *atomic.Uint64, v uint64) { p.Store(v) }
