//go:build purego

package hashfn

// stringBytes copies s; the unsafe twin in stringbytes_unsafe.go does not.
func stringBytes(s string) []byte { return []byte(s) }
