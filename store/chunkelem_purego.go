//go:build purego

package store

// chunkElem returns element i of a chunked array (chunkelem_unsafe.go).
func chunkElem[T any](chunks [][]T, i uint64) *T {
	return &chunks[i>>chunkBits][i&(chunkSize-1)]
}
