//go:build !purego

package store

import "unsafe"

// The functions below view a key through its memory, which is valid for
// the kinds newHasher checked with reflect before choosing them: a string
// kind has a string's layout, an array of bytes is its bytes, and an integer
// kind is size little- or big-endian bytes that we read as an unsigned
// integer of that size (the hash needs an injective map to uint64, not the
// value's sign). Build with -tags purego for the reflection twins in
// keyhash_purego.go.

func keyString[K any](k *K) string { return *(*string)(unsafe.Pointer(k)) }

func keyBytes[K any](k *K) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(k)), unsafe.Sizeof(*k))
}

func keyUint[K any](k *K, size uintptr) uint64 {
	p := unsafe.Pointer(k)
	switch size {
	case 1:
		return uint64(*(*uint8)(p))
	case 2:
		return uint64(*(*uint16)(p))
	case 4:
		return uint64(*(*uint32)(p))
	}
	return *(*uint64)(p)
}
