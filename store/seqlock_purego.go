//go:build purego

package store

// The purego build reads every slot under its bucket's read lock: without
// unsafe there is no way to copy a slot word by word (see
// seqlock_unsafe.go).
const optimisticReads = false

func loadSlot[K comparable, V any](dst, src *slot[K, V], l wordLayout) {
	panic("store: optimistic read in a purego build")
}

func storeSlot[K comparable, V any](dst, src *slot[K, V], from int, l wordLayout) {
	panic("store: optimistic write in a purego build")
}

func valueWord[K comparable, V any]() int { return 0 }

// stripeHint is 0 without unsafe: the counters then use the key's hash,
// which spreads them but lets goroutines reading the same keys share lines.
func stripeHint() uint64 { return 0 }

func readSlot[K comparable, V any](dst, src *slot[K, V], l wordLayout) {
	panic("store: optimistic read in a purego build")
}
