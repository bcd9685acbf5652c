package store

import (
	"hash/maphash"
	"reflect"

	"github.com/twochoice/twochoice/hashfn"
)

// keyShape says how a key type is hashed; New picks it once from K, so the
// hot path never inspects a key's type.
type keyShape uint8

const (
	shapeString keyShape = iota // a string kind: hashed as its bytes
	shapeBytes                  // an array of bytes: hashed as its bytes
	shapeInt                    // an integer kind: hashed as a uint64
	shapeOther                  // anything else comparable: maphash.Comparable
)

func shapeOf(t reflect.Type) keyShape {
	switch t.Kind() {
	case reflect.String:
		return shapeString
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return shapeInt
	case reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return shapeBytes
		}
	}
	return shapeOther
}

// processSeed seeds the maphash fallback. maphash seeds cannot be chosen,
// only drawn, so a key type that falls back to maphash hashes the same way
// only within one process: the store's seed is mixed in on top, which makes
// two stores with different seeds differ, but a restart changes every hash.
var processSeed = maphash.MakeSeed()

// hasher is a hash function of keys: fn, a family and a seed, and hash,
// which applies it to a K (newHasher). A table keeps one.
type hasher[K comparable] struct {
	hash func(K) uint64
	fn   hashfn.Func
}

// hashOf returns k's hash: hash, as a method, for interfaces.
func (h hasher[K]) hashOf(k K) uint64 { return h.hash(k) }

// hasherOf returns the hasher of fn.
func hasherOf[K comparable](fn hashfn.Func) hasher[K] {
	return hasher[K]{hash: newHasher[K](fn), fn: fn}
}

// newHasher returns the function that hashes keys of type K with f. Strings,
// byte arrays and integer kinds are hashed without allocating, through the
// reinterpretations in keyhash_unsafe.go (or the reflection in
// keyhash_purego.go); tabulation takes integers directly and strings and
// byte arrays through its xxHash fold; SipHash takes all three directly.
// Other key types go through
// maphash.Comparable and then through f, so they stay seeded by the store's
// seed, but reproducible only within a process.
func newHasher[K comparable](f hashfn.Func) func(K) uint64 {
	t := reflect.TypeFor[K]()
	size := t.Size()
	shape := shapeOf(t)
	// One closure per family and shape, each calling the concrete family
	// directly, so a Get pays one indirect call (to the closure) and a
	// direct one. The family's method is inlined into the closure only
	// where the compiler has its body: a generic closure is compiled in
	// the package that instantiates the Map or Cache, and there, unless that
	// package imports hashfn itself, XXH.String stays a call. Closures
	// built in non-generic functions here, so that it would inline for
	// every user, measure no faster (BenchmarkGetRatio), so this stays
	// simple.
	switch f := f.(type) {
	case hashfn.XXH:
		switch shape {
		case shapeString:
			return func(k K) uint64 { return f.String(keyString(&k)) }
		case shapeBytes:
			return func(k K) uint64 { return f.Bytes(keyBytes(&k)) }
		case shapeInt:
			return func(k K) uint64 { return f.Uint64(keyUint(&k, size)) }
		}
		return func(k K) uint64 { return f.Uint64(maphash.Comparable(processSeed, k)) }
	case *hashfn.Tab:
		switch shape {
		case shapeString:
			return func(k K) uint64 { return f.String(keyString(&k)) }
		case shapeBytes:
			return func(k K) uint64 { return f.Bytes(keyBytes(&k)) }
		case shapeInt:
			return func(k K) uint64 { return f.Uint64(keyUint(&k, size)) }
		}
		return func(k K) uint64 { return f.Uint64(maphash.Comparable(processSeed, k)) }
	case hashfn.Sip:
		switch shape {
		case shapeString:
			return func(k K) uint64 { return f.String(keyString(&k)) }
		case shapeBytes:
			return func(k K) uint64 { return f.Bytes(keyBytes(&k)) }
		case shapeInt:
			return func(k K) uint64 { return f.Uint64(keyUint(&k, size)) }
		}
		return func(k K) uint64 { return f.Uint64(maphash.Comparable(processSeed, k)) }
	}
	panic("store: unknown hash family") // New validated the family
}
