//go:build !amd64 || purego

package sim

// Without the assembly (sorted_loops.go), the loops are the Go ones.

func oneLoop(bins []uint8, next *[256]uint32, x, end uint64, k uint) uint64 {
	return oneLoopGo(bins, next, x, end, k)
}

func max2Loop(bins []uint8, next *[256]uint32, x, end, size uint64) uint64 {
	return max2LoopGo(bins, next, x, end, size)
}

func pairLoop(bins *[2 * sortedMax]uint8, next *[512]uint32, t *pairTable, x, end, mask uint64) uint64 {
	return pairLoopGo(bins, next, t, x, end, mask)
}

func halvesLoop(bins *[2 * sortedMax]uint8, next *[512]uint32, t *pairTable, x, end, mask uint64) (uint64, int) {
	return halvesLoopGo(bins, next, t, x, end, mask)
}

func halvesLoop2(bins *[4 * sortedMax]uint8, nextA, nextB *[512]uint32, t *pairTable, xA, xB, words, mask uint64) (uint64, uint64, int, int) {
	return halvesLoop2Go(bins, nextA, nextB, t, xA, xB, words, mask)
}

func oneLoop2(bins *[4 * sortedMax]uint8, nextA, nextB *[256]uint32, xA, xB, words uint64, k uint) (uint64, uint64, int, int) {
	return oneLoop2Go(bins, nextA, nextB, xA, xB, words, k)
}

func max2Loop2(bins *[4 * sortedMax]uint8, nextA, nextB *[256]uint32, xA, xB, words, size uint64) (uint64, uint64, int, int) {
	return max2Loop2Go(bins, nextA, nextB, xA, xB, words, size)
}
