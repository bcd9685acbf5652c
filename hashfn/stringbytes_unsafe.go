//go:build !purego

package hashfn

import "unsafe"

// stringBytes views the bytes of s as a slice without copying them. The
// hash functions only read the slice, so the string's immutability holds.
// Build with -tags purego for the copying version in stringbytes_purego.go.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
