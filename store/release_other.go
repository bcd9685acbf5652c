//go:build !amd64 || purego || race

package store

import "sync/atomic"

// storeRelease is an atomic store where release_amd64.go does not apply
// (on arm64 it is a store-release, with no wait for earlier stores).
func storeRelease(p *atomic.Uint64, v uint64) { p.Store(v) }
