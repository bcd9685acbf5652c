//go:build purego

package store

import "reflect"

// The reflection twins of keyhash_unsafe.go: slower, and a string key may
// allocate, but no unsafe. They give the same hashes.

func keyString[K any](k *K) string { return reflect.ValueOf(k).Elem().String() }

func keyBytes[K any](k *K) []byte {
	v := reflect.ValueOf(k).Elem()
	b := make([]byte, v.Len())
	reflect.Copy(reflect.ValueOf(b), v)
	return b
}

func keyUint[K any](k *K, size uintptr) uint64 {
	v := reflect.ValueOf(k).Elem()
	var u uint64
	if v.CanInt() {
		u = uint64(v.Int())
	} else {
		u = v.Uint()
	}
	if size < 8 {
		u &= 1<<(8*size) - 1
	}
	return u
}
