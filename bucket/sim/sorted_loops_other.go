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
