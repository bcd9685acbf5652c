//go:build amd64 && !purego

package sim

// The sorted mode's loops in assembly (sorted_loops_amd64.s); each does
// what its Go twin in sorted_loops.go does.

//go:noescape
func oneLoop(bins []uint8, next *[256]uint32, x, end uint64, k uint) uint64

//go:noescape
func max2Loop(bins []uint8, next *[256]uint32, x, end, size uint64) uint64

//go:noescape
func pairLoop(bins *[2 * sortedMax]uint8, next *[512]uint32, t *pairTable, x, end, mask uint64) uint64

//go:noescape
func halvesLoop(bins *[2 * sortedMax]uint8, next *[512]uint32, t *pairTable, x, end, mask uint64) (uint64, int)

//go:noescape
func halvesLoop2(bins *[4 * sortedMax]uint8, nextA, nextB *[512]uint32, t *pairTable, xA, xB, words, mask uint64) (uint64, uint64, int, int)

//go:noescape
func oneLoop2(bins *[4 * sortedMax]uint8, nextA, nextB *[256]uint32, xA, xB, words uint64, k uint) (uint64, uint64, int, int)

//go:noescape
func max2Loop2(bins *[4 * sortedMax]uint8, nextA, nextB *[256]uint32, xA, xB, words, size uint64) (uint64, uint64, int, int)
