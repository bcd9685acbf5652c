package sim

import (
	"math/bits"

	"github.com/twochoice/twochoice/hashfn"
)

// stream is the random source of one run: SplitMix64 (see hashfn.SplitMix64)
// kept inline here so that the hot loops hold its state in a register. It is
// the generator the project already uses for tables and sub-seeds, passes
// BigCrush, and costs two multiplies per 64-bit word. A run at 2^36 bins
// draws about 2^37 words, far below its period of 2^64.
type stream struct{ s uint64 }

// golden is 2^64/φ rounded to odd, SplitMix64's increment.
const golden = 0x9e3779b97f4a7c15

// RunSeed returns the seed of run r of a simulation seeded with seed. Runs
// draw from streams that depend only on (seed, r), never on which core or in
// which order they run, so results are the same whatever the parallelism,
// and run r alone replays from RunSeed(seed, r).
func RunSeed(seed uint64, r int) uint64 {
	return hashfn.Extend(hashfn.Mix(seed), r+1)
}

func newStream(seed uint64) stream { return stream{s: seed} }

func (g *stream) next() uint64 {
	g.s += golden
	return mix(g.s)
}

// mix is hashfn.Mix, SplitMix64's output function.
func mix(z uint64) uint64 { return hashfn.Mix(z) }

// below returns a uniform integer in [0, n), n ≥ 1, exactly: Lemire's
// multiply-shift on a 64-bit word, rejecting the 2^64 mod n words that would
// bias it. The rejection test almost never passes (probability n/2^64), so
// the branch costs nothing.
func (g *stream) below(n uint64) uint64 {
	hi, lo := bits.Mul64(g.next(), n)
	if lo < n {
		t := -n % n
		for lo < t {
			hi, lo = bits.Mul64(g.next(), n)
		}
	}
	return hi
}

// reject finishes below's rejection step for a first draw (hi, lo): it is
// out of line so that the hot loops that inline below's fast path stay
// small.
func (g *stream) reject(hi, lo, n uint64) uint64 {
	t := -n % n
	for lo < t {
		hi, lo = bits.Mul64(g.next(), n)
	}
	return hi
}
