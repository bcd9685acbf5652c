package sim

import (
	"math/bits"

	"github.com/twochoice/twochoice/hashfn"
)

// stream is the random source of one run: wyrand (Wang Yi's generator, the
// one Go's runtime uses for its cheap random numbers). Its state is a
// Weyl sequence (add a constant) and each output is one 64×64→128-bit
// multiply folded to 64 bits: about five instructions, half of SplitMix64's,
// which matters in loops that spend a few nanoseconds per ball. It passes
// BigCrush and PractRand; a run at 2^36 bins draws about 2^37 words, far
// below its period of 2^64. Seeds go through hashfn.Mix first, so runs with
// nearby seeds start far apart.
type stream struct{ s uint64 }

// wyrand's constants.
const (
	golden = 0xa0761d6478bd642f // the Weyl increment (odd)
	wyMix  = 0xe7037ed1a0b428db
)

// RunSeed returns the seed of run r of a simulation seeded with seed. Runs
// draw from streams that depend only on (seed, r), never on which core or in
// which order they run, so results are the same whatever the parallelism,
// and run r alone replays from RunSeed(seed, r).
func RunSeed(seed uint64, r int) uint64 {
	return hashfn.Extend(hashfn.Mix(seed), r+1)
}

func newStream(seed uint64) stream { return stream{s: hashfn.Mix(seed)} }

func (g *stream) next() uint64 {
	g.s += golden
	return mix(g.s)
}

// mix is wyrand's output function of the state s.
func mix(s uint64) uint64 {
	hi, lo := bits.Mul64(s, s^wyMix)
	return hi ^ lo
}

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

// drawn is the number of words a stream drew from state x0 to state x. The
// sorted-mode loops count balls by the stream's state alone, one variable
// fewer for the compiler to keep in a register: the state moves by golden
// per word, and golden is odd, so multiplying the distance by golden's
// inverse modulo 2^64 gives the number of words.
func drawn(x0, x uint64) uint64 { return (x - x0) * goldenInverse }

// goldenInverse · golden = 1 modulo 2^64.
const goldenInverse = 0x939c72e4af1e62cf
