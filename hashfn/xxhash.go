package hashfn

import (
	"encoding/binary"
	"math/bits"
)

// XXH is xxHash64 (Yann Collet's XXH64) with a seed. Its outputs equal those
// of github.com/cespare/xxhash/v2's Digest started with the same seed, and
// with seed 0 those of xxhash.Sum64; the tests check both. It is written out
// here rather than called through a Digest because a Digest copies short
// inputs into a buffer first, which more than doubles the cost of hashing a
// 16-byte key; this version handles a key in registers, in one pass.
type XXH struct{ seed uint64 }

// NewXXH returns xxHash64 with the given seed.
func NewXXH(seed uint64) XXH { return XXH{seed: seed} }

// Kind returns XXHash.
func (XXH) Kind() Kind { return XXHash }

// Seed returns the seed.
func (x XXH) Seed() uint64 { return x.seed }

// String hashes the bytes of s.
func (x XXH) String(s string) uint64 { return xxh64(stringBytes(s), x.seed) }

// Bytes hashes b.
func (x XXH) Bytes(b []byte) uint64 { return xxh64(b, x.seed) }

// Uint64 hashes the 8 little-endian bytes of v. It equals Bytes of those
// bytes, computed without building them.
func (x XXH) Uint64(v uint64) uint64 {
	return avalanche(step8(x.seed+prime5+8, v))
}

// The five primes of the XXH64 specification.
const (
	prime1 uint64 = 0x9e3779b185ebca87
	prime2 uint64 = 0xc2b2ae3d27d4eb4f
	prime3 uint64 = 0x165667b19e3779f9
	prime4 uint64 = 0x85ebca77c2b2ae63
	prime5 uint64 = 0x27d4eb2f165667c5
)

func u64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
func u32(b []byte) uint64 { return uint64(binary.LittleEndian.Uint32(b)) }

func round(acc, in uint64) uint64 {
	acc += in * prime2
	acc = bits.RotateLeft64(acc, 31)
	return acc * prime1
}

func mergeRound(acc, v uint64) uint64 {
	acc ^= round(0, v)
	return acc*prime1 + prime4
}

func avalanche(h uint64) uint64 {
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h
}

// xxh64 is the XXH64 algorithm: four lanes over whole 32-byte stripes,
// then the last len(b) mod 32 bytes in 8-, 4- and 1-byte steps, then the
// avalanche. It calls nothing that is not inlined, so it runs without a
// stack frame; splitting the stripe loop into a function of its own cost
// 6% on 16-byte keys (a frame and a spill on every call). The 8-byte steps
// are unrolled under nested length checks rather than looped: with constant
// offsets the compiler drops every bounds check, which made 16-byte keys
// about 20% faster than a loop. Re-slicing b in the stripe loop, rather than
// indexing at an offset, drops its bounds checks too.
func xxh64(b []byte, seed uint64) uint64 {
	n := len(b)
	h := seed + prime5
	if n >= 32 {
		v1 := seed + prime1 + prime2
		v2 := seed + prime2
		v3 := seed
		v4 := seed - prime1
		for len(b) >= 32 {
			v1 = round(v1, u64(b[0:8:len(b)]))
			v2 = round(v2, u64(b[8:16:len(b)]))
			v3 = round(v3, u64(b[16:24:len(b)]))
			v4 = round(v4, u64(b[24:32:len(b)]))
			b = b[32:len(b):len(b)]
		}
		h = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) +
			bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		h = mergeRound(h, v1)
		h = mergeRound(h, v2)
		h = mergeRound(h, v3)
		h = mergeRound(h, v4)
	}
	h += uint64(n)
	r := len(b)
	if r >= 8 {
		h = step8(h, u64(b[0:8]))
		if r >= 16 {
			h = step8(h, u64(b[8:16]))
			if r >= 24 {
				h = step8(h, u64(b[16:24]))
			}
		}
	}
	// The last r mod 8 bytes: a 4-byte step if there are 4 or more, then
	// single bytes. One chain of tests on the exact count, each predicted
	// "not this one", costs a key of random length one mispredicted branch
	// (7 in 8 on average) where a test on 4 followed by a byte loop costs
	// 1.25, and each count runs straight-line code. On keys of mixed
	// lengths it puts XXH.String at 1.01x xxhash.Sum64String, where the
	// test on 4 and a byte loop give 1.05x (BenchmarkRatio/mixed-*). It is a
	// tagless switch on purpose: "switch len(b)" compiles to a jump table,
	// and its indirect branch, mispredicted, costs far more here: 1.35x
	// with a table over these 8 cases, 1.6x with one over all 32 tails.
	b = b[r&^7:]
	switch {
	case len(b) == 0:
	case len(b) == 1:
		h = step1(h, b[0])
	case len(b) == 2:
		h = step1(h, b[0])
		h = step1(h, b[1])
	case len(b) == 3:
		h = step1(h, b[0])
		h = step1(h, b[1])
		h = step1(h, b[2])
	case len(b) == 4:
		h = step4(h, u32(b[0:4]))
	case len(b) == 5:
		h = step4(h, u32(b[0:4]))
		h = step1(h, b[4])
	case len(b) == 6:
		h = step4(h, u32(b[0:4]))
		h = step1(h, b[4])
		h = step1(h, b[5])
	default: // len(b) == 7
		h = step4(h, u32(b[0:4]))
		h = step1(h, b[4])
		h = step1(h, b[5])
		h = step1(h, b[6])
	}
	return avalanche(h)
}

func step8(h, w uint64) uint64 {
	h ^= round(0, w)
	return bits.RotateLeft64(h, 27)*prime1 + prime4
}

// step4 mixes a 4-byte word w into h, as XXH64's tail does.
func step4(h, w uint64) uint64 {
	h ^= w * prime1
	return bits.RotateLeft64(h, 23)*prime2 + prime3
}

// step1 mixes one byte c into h, as XXH64's tail does.
func step1(h uint64, c byte) uint64 {
	h ^= uint64(c) * prime5
	return bits.RotateLeft64(h, 11) * prime1
}
