package hashfn

import (
	"encoding/binary"
	"math/bits"
)

// Sip is SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input
// PRF", INDOCRYPT 2012) under a 128-bit key drawn from the seed: the key's
// two words are the first two outputs of [SplitMix64] started at the seed.
//
// SipHash is a pseudorandom function: without the key, no one can find
// keys that collide, or that share candidate buckets, faster than by trying
// them, whatever they know of the algorithm. xxHash64 and tabulation are
// fast and spread ordinary keys as well as a random function would, but
// neither resists an adversary: xxHash64 has input differences that cancel
// for every seed (keys of 64 bytes or more can be built to collide without
// knowing it), its 8-byte hash is invertible, and tabulation is linear in
// its tables. A store switches a table to Sip when keys collide far more
// than the fluid limit allows (see package store's "Hash flooding"). It
// costs 3 to 5 times xxHash64: 12 ns for an 8-byte key and 120–160 ns for
// 256 bytes, against 3.5 and 30 ns (BenchmarkHash, Sip.String and
// XXH.String, on a 2-core AMD EPYC).
type Sip struct {
	k0, k1 uint64
	seed   uint64
}

// NewSip returns SipHash-2-4 keyed from seed.
func NewSip(seed uint64) Sip {
	g := NewSplitMix64(seed)
	k0 := g.Next()
	return Sip{k0: k0, k1: g.Next(), seed: seed}
}

// NewSipKey returns SipHash-2-4 under the key (k0, k1) itself, as the
// specification's test vectors give it: k0 is the key's first 8 bytes read
// little-endian. Its Seed is 0; a store cannot use it, since a table is
// rebuilt from its family and seed.
func NewSipKey(k0, k1 uint64) Sip { return Sip{k0: k0, k1: k1} }

// Kind returns SipHash.
func (Sip) Kind() Kind { return SipHash }

// Seed returns the seed the key was drawn from.
func (s Sip) Seed() uint64 { return s.seed }

// String hashes the bytes of s.
func (s Sip) String(str string) uint64 { return s.sum(stringBytes(str)) }

// Bytes hashes b.
func (s Sip) Bytes(b []byte) uint64 { return s.sum(b) }

// Uint64 hashes the 8 little-endian bytes of v. It equals Bytes of those
// bytes, computed without building them.
func (s Sip) Uint64(v uint64) uint64 {
	v0, v1, v2, v3 := s.init()
	v0, v1, v2, v3 = compress(v0, v1, v2, v3, v)
	// The final block: no bytes left, the length 8 in the top byte.
	return finish(v0, v1, v2, v3, 8<<56)
}

// init returns the initial state for the key.
func (s Sip) init() (v0, v1, v2, v3 uint64) {
	return s.k0 ^ 0x736f6d6570736575, s.k1 ^ 0x646f72616e646f6d,
		s.k0 ^ 0x6c7967656e657261, s.k1 ^ 0x7465646279746573
}

// sum is SipHash-2-4 of b: two rounds per 8-byte word, the last word
// padded with the length's low byte on top, then four rounds.
func (s Sip) sum(b []byte) uint64 {
	v0, v1, v2, v3 := s.init()
	n := len(b)
	for len(b) >= 8 {
		v0, v1, v2, v3 = compress(v0, v1, v2, v3, binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	last := uint64(n) << 56
	for i := len(b) - 1; i >= 0; i-- {
		last |= uint64(b[i]) << (8 * i)
	}
	return finish(v0, v1, v2, v3, last)
}

// compress absorbs one message word m.
func compress(v0, v1, v2, v3, m uint64) (uint64, uint64, uint64, uint64) {
	v3 ^= m
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0 ^= m
	return v0, v1, v2, v3
}

// finish absorbs the last word and returns the hash.
func finish(v0, v1, v2, v3, last uint64) uint64 {
	v0, v1, v2, v3 = compress(v0, v1, v2, v3, last)
	v2 ^= 0xff
	for range 4 {
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	}
	return v0 ^ v1 ^ v2 ^ v3
}

func sipRound(v0, v1, v2, v3 uint64) (uint64, uint64, uint64, uint64) {
	v0 += v1
	v1 = bits.RotateLeft64(v1, 13)
	v1 ^= v0
	v0 = bits.RotateLeft64(v0, 32)
	v2 += v3
	v3 = bits.RotateLeft64(v3, 16)
	v3 ^= v2
	v0 += v3
	v3 = bits.RotateLeft64(v3, 21)
	v3 ^= v0
	v2 += v1
	v1 = bits.RotateLeft64(v1, 17)
	v1 ^= v2
	v2 = bits.RotateLeft64(v2, 32)
	return v0, v1, v2, v3
}
