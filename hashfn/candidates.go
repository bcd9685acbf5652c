package hashfn

import (
	"errors"
	"fmt"
	"math/bits"
)

// MaxChoices is the largest number of candidates a key may have.
const MaxChoices = 8

// MaxBuckets is the largest range candidates can be drawn from: a candidate
// is a 32-bit word reduced onto [0, n).
const MaxBuckets = 1 << 32

// ErrRange is returned for a range or choice count that a scheme cannot serve.
var ErrRange = errors.New("hashfn: bad candidate range")

// Scheme is a way of drawing candidates from a hash.
type Scheme uint8

const (
	// Independent draws each candidate from the whole range.
	Independent Scheme = iota
	// Parts cuts the range into d parts and draws candidate k from part k.
	Parts
	// Double is double hashing: f + k·g mod n for k = 0 … d-1.
	Double
)

func (s Scheme) String() string {
	switch s {
	case Independent:
		return "independent"
	case Parts:
		return "parts"
	case Double:
		return "double"
	}
	return fmt.Sprintf("Scheme(%d)", uint8(s))
}

// Reduce maps w onto [0, n) as ⌊w·n / 2^32⌋ (Lemire's multiply-shift). n
// must be at most 2^32.
func Reduce(w uint32, n uint64) uint64 { return uint64(w) * n >> 32 }

// Word returns word i of the candidate stream of h (see the package doc).
func Word(h uint64, i int) uint32 {
	if i >= 2 {
		h = Extend(h, i/2)
	}
	return uint32(h >> (32 * uint(i&1)))
}

// Generator draws d candidates in [0, n) from a key's hash under one scheme.
// It is a small value, built once per table size and copied freely.
type Generator struct {
	scheme Scheme
	d      int
	n      uint64
	// Parts: part k is [lo[k], lo[k+1]); lo[k] = ⌊k·n/d⌋, so part sizes
	// differ by at most one and are all equal when d divides n.
	lo [MaxChoices + 1]uint64
	// Double: pow2 is set when n is a power of two (g odd, masks), clear
	// when n is prime (g in [1, n)).
	pow2 bool
}

// NewGenerator validates (scheme, n, d) and returns the generator. n must be
// in [d, 2^32] (in [1, 2^32] for Independent) and d in [1, MaxChoices]; Double
// needs n prime or a power of two, so that its d candidates never repeat.
func NewGenerator(s Scheme, n uint64, d int) (Generator, error) {
	g := Generator{scheme: s, d: d, n: n}
	if d < 1 || d > MaxChoices {
		return g, fmt.Errorf("%w: %d choices (want 1 to %d)", ErrRange, d, MaxChoices)
	}
	if n < 1 || n > MaxBuckets {
		return g, fmt.Errorf("%w: %d buckets (want 1 to 2^32)", ErrRange, n)
	}
	switch s {
	case Independent:
	case Parts:
		if n < uint64(d) {
			return g, fmt.Errorf("%w: %d buckets cannot make %d parts", ErrRange, n, d)
		}
		for k := 0; k <= d; k++ {
			hi, lo := bits.Mul64(uint64(k), n)
			g.lo[k], _ = bits.Div64(hi, lo, uint64(d))
		}
	case Double:
		if n < uint64(d) {
			return g, fmt.Errorf("%w: %d buckets cannot hold %d distinct candidates", ErrRange, n, d)
		}
		switch {
		case n&(n-1) == 0:
			g.pow2 = true
		case IsPrime(n):
		default:
			return g, fmt.Errorf("%w: double hashing needs a prime or a power of two, not %d buckets", ErrRange, n)
		}
	default:
		return g, fmt.Errorf("%w: unknown scheme %d", ErrRange, uint8(s))
	}
	return g, nil
}

// Scheme, Choices and Buckets report what the generator was built with.
func (g *Generator) Scheme() Scheme  { return g.scheme }
func (g *Generator) Choices() int    { return g.d }
func (g *Generator) Buckets() uint64 { return g.n }

// PartOf returns the part that bucket b belongs to: always 0 unless the
// scheme is Parts.
func (g *Generator) PartOf(b uint64) int {
	if g.scheme != Parts {
		return 0
	}
	k := 0
	for k+1 < g.d && b >= g.lo[k+1] {
		k++
	}
	return k
}

// PartBounds returns the first bucket of part k and the first bucket past it.
func (g *Generator) PartBounds(k int) (lo, hi uint64) {
	if g.scheme != Parts {
		return 0, g.n
	}
	return g.lo[k], g.lo[k+1]
}

// Fill writes the d candidates of hash h into dst[:d]. For Parts, dst[k] is
// in part k; for Double, the candidates are distinct.
func (g *Generator) Fill(h uint64, dst []uint64) {
	dst = dst[:g.d]
	switch g.scheme {
	case Independent:
		e := h
		for k := range dst {
			if k >= 2 && k&1 == 0 {
				e = Extend(h, k/2)
			}
			dst[k] = Reduce(uint32(e>>(32*uint(k&1))), g.n)
		}
	case Parts:
		e := h
		for k := range dst {
			if k >= 2 && k&1 == 0 {
				e = Extend(h, k/2)
			}
			dst[k] = g.lo[k] + Reduce(uint32(e>>(32*uint(k&1))), g.lo[k+1]-g.lo[k])
		}
	case Double:
		n := g.n
		c := Reduce(uint32(h), n)
		var step uint64
		if g.pow2 {
			step = 2*Reduce(uint32(h>>32), n/2) + 1
		} else {
			step = 1 + Reduce(uint32(h>>32), n-1)
		}
		for k := range dst {
			dst[k] = c
			// c + step < 2n, so one conditional subtraction is the mod.
			c += step
			if c >= n {
				c -= n
			}
		}
	}
}

// IsPrime reports whether n is prime, for any 64-bit n: by trial division
// below 2^32 (at most 2^15 divisions, which covers every table size), and
// above it by the Miller–Rabin test with the first twelve primes as bases,
// which no composite below 3.3·10^24 passes, so the answer is exact.
func IsPrime(n uint64) bool {
	if n < 2 {
		return false
	}
	if n%2 == 0 {
		return n == 2
	}
	if n >= 1<<32 {
		return millerRabin(n)
	}
	for q := uint64(3); q*q <= n; q += 2 {
		if n%q == 0 {
			return false
		}
	}
	return true
}

// millerRabin is the deterministic Miller–Rabin test for odd n ≥ 2^32.
func millerRabin(n uint64) bool {
	mulmod := func(a, b uint64) uint64 {
		hi, lo := bits.Mul64(a, b)
		return bits.Rem64(hi, lo, n)
	}
	d, r := n-1, 0
	for d%2 == 0 {
		d, r = d/2, r+1
	}
	for _, a := range [...]uint64{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37} {
		x := uint64(1)
		for b, e := a, d; e > 0; e >>= 1 {
			if e&1 == 1 {
				x = mulmod(x, b)
			}
			b = mulmod(b, b)
		}
		if x == 1 || x == n-1 {
			continue
		}
		composite := true
		for range r - 1 {
			if x = mulmod(x, x); x == n-1 {
				composite = false
				break
			}
		}
		if composite {
			return false
		}
	}
	return true
}

// largestPrime64 is the largest prime below 2^64: 2^64 - 59.
const largestPrime64 = 1<<64 - 59

// PrimeAtLeast returns the smallest prime ≥ n, or 0 if there is none below
// 2^64 (n above 2^64 - 59; counting on from there would wrap around to 2).
func PrimeAtLeast(n uint64) uint64 {
	if n > largestPrime64 {
		return 0
	}
	for !IsPrime(n) {
		n++
	}
	return n
}
