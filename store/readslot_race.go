//go:build !purego && race

package store

// readSlot copies *src into *dst, a reader's local variable, for an
// optimistic read: under the race detector, word by word with atomic
// loads (loadSlot), so that the detector sees them against the writers'
// atomic stores (readslot_norace.go has the copy outside it).
func readSlot[K comparable, V any](dst, src *slot[K, V], l wordLayout) {
	loadSlot(dst, src, l)
}
