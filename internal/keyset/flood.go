package keyset

import (
	"encoding/binary"
	"math/rand/v2"
)

// The XXH64 primes that the lane differences below are built from.
const (
	xxPrime1 uint64 = 0x9e3779b185ebca87
	xxPrime2 uint64 = 0xc2b2ae3d27d4eb4f
)

// XXHashFlood returns n distinct keys of size bytes (size a multiple of 64,
// n at most 2^(size/16)) that seeded xxHash64 maps to one hash for almost
// every seed: an attacker's key set, built without knowing the seed.
//
// Why they collide: XXH64 feeds each 8-byte word w of a 32-byte stripe to
// one of four lanes as acc' = rotl(acc + w·p2, 31)·p1. Add δ = 2^33·inv(p2)
// to a lane's word in one stripe: acc + w·p2 grows by 2^33, and rotating
// by 31 turns that into +1 unless the sum's top 31 bits are all ones (odds
// of 2^-31, whatever the seed), so the lane's accumulator after the stripe
// grows by exactly p1. Subtract p1·inv(p2) from the same lane's word in the
// next stripe and the difference cancels there: the lane, and so the hash,
// is the same as without either change. Each (lane, pair of stripes) of the
// key is such a switch, and the keys are the combinations of the first
// log2(n) switches over a random base.
func XXHashFlood(n, size int, seed uint64) [][]byte {
	positions := (size / 64) * 4 // pairs of stripes × lanes
	if size%64 != 0 || n > 1<<min(positions, 30) {
		panic("keyset: XXHashFlood needs size a multiple of 64 and n ≤ 2^(size/16)")
	}
	inv := inverse(xxPrime2)
	up := (uint64(1) << 33) * inv
	down := xxPrime1 * inv
	r := rand.New(rand.NewPCG(seed, 0xf100d))
	base := make([]byte, size)
	for i := range base {
		base[i] = byte(r.Uint32())
	}
	keys := make([][]byte, n)
	for x := range keys {
		k := append([]byte(nil), base...)
		for p := range positions {
			if x>>p&1 == 0 {
				continue
			}
			pair, lane := p/4, p%4
			first := 64*pair + 8*lane
			second := first + 32
			binary.LittleEndian.PutUint64(k[first:], binary.LittleEndian.Uint64(k[first:])+up)
			binary.LittleEndian.PutUint64(k[second:], binary.LittleEndian.Uint64(k[second:])-down)
		}
		keys[x] = k
	}
	return keys
}

// inverse returns the inverse of the odd number a modulo 2^64, by Newton's
// iteration (each step doubles the bits that are right).
func inverse(a uint64) uint64 {
	x := a // right to 3 bits for odd a
	for range 5 {
		x *= 2 - a*x
	}
	return x
}
