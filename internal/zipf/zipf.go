// Package zipf draws ranks from Zipf's law for any exponent s > 0, and
// gives the share of requests its top ranks take. It is the law behind
// the benchmark's Zipf and aging workloads (bench/workload) and the
// store's tests, and it uses the standard library alone so that both can
// import it.
//
// A rank is a key's place in a popularity order: rank r, from 0, is drawn
// with probability proportional to 1/(r+1)^s over n ranks.
//
// The standard library's rand.Zipf needs s > 1, but measured cache
// workloads often have s < 1, so a Sampler draws by rejection-inversion
// (W. Hörmann and G. Derflinger, "Rejection-inversion to generate variates
// from monotone discrete distributions", ACM TOMACS 6(3), 1996): it inverts
// the integral of the continuous density x^-s, rounds to the nearest
// integer and accepts the result with a test that makes the law exact. It
// takes O(1) memory and time for any n, and accepts more than 9 draws in
// 10 on average, so a draw costs one or two logarithms and exponentials.
package zipf

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// ErrParam: an exponent or a number of ranks out of range.
var ErrParam = errors.New("zipf: bad parameter")

// MaxKeys is the largest n for which every rank is exact as a float64.
const MaxKeys = 1 << 53

// Sampler draws ranks 0 … n-1 of Zipf's law with exponent s. It is not
// safe for concurrent use.
type Sampler struct {
	s   float64 // exponent
	n   float64 // number of ranks, as a float
	rng rand.PCG

	oneMinusS float64
	hX1       float64 // H(1.5) - 1: the left end of the sampling interval
	hN        float64 // H(n + 0.5): its right end
	squeeze   float64 // a draw within squeeze of its integer needs no test
}

// New returns a sampler over n ranks (1 ≤ n ≤ MaxKeys) with exponent s (a
// finite s > 0), drawing from the given seed: the same seed gives the
// same ranks on every machine.
func New(s float64, n, seed uint64) (*Sampler, error) {
	if !(s > 0) || math.IsInf(s, 0) {
		return nil, fmt.Errorf("%w: exponent s = %v, want a finite s > 0", ErrParam, s)
	}
	if n < 1 || n > MaxKeys {
		return nil, fmt.Errorf("%w: %d ranks, want 1 to 2^53", ErrParam, n)
	}
	z := &Sampler{s: s, n: float64(n), oneMinusS: 1 - s}
	z.rng.Seed(seed, stream)
	z.hX1 = z.hIntegral(1.5) - 1
	z.hN = z.hIntegral(z.n + 0.5)
	z.squeeze = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z, nil
}

// stream is the PCG stream of samplers, so that a sampler and another
// generator given the same seed still draw unrelated numbers.
const stream = 0x7a697066 // "zipf"

// Next returns the next rank, in [0, n).
func (z *Sampler) Next() uint64 {
	for {
		// u is uniform in (hX1, hN]; Float64 is uniform in [0, 1).
		u := z.hN + z.float64()*(z.hX1-z.hN)
		x := z.hIntegralInverse(u)
		k := math.Floor(x + 0.5)
		if k < 1 {
			k = 1
		} else if k > z.n {
			k = z.n
		}
		// Accept at once when x is close to k (the squeeze), otherwise
		// when u falls under the histogram bar of k.
		if k-x <= z.squeeze || u >= z.hIntegral(k+0.5)-z.h(k) {
			return uint64(k) - 1
		}
	}
}

// float64 returns a uniform number in [0, 1) with 53 random bits. It calls
// the PCG directly rather than through rand.Rand's interface.
func (z *Sampler) float64() float64 {
	return float64(z.rng.Uint64()>>11) * 0x1p-53
}

// h is the density x^-s.
func (z *Sampler) h(x float64) float64 {
	return math.Exp(-z.s * math.Log(x))
}

// hIntegral is H(x) = (x^(1-s) - 1)/(1-s), an antiderivative of h (log x
// when s = 1), computed without cancellation for s near 1.
func (z *Sampler) hIntegral(x float64) float64 {
	lx := math.Log(x)
	return expm1Div(z.oneMinusS*lx) * lx
}

// hIntegralInverse is the inverse of H.
func (z *Sampler) hIntegralInverse(y float64) float64 {
	t := y * z.oneMinusS
	if t < -1 {
		t = -1 // only rounding can take t below -1; keep log1p finite
	}
	return math.Exp(log1pDiv(t) * y)
}

// log1pDiv is log(1+x)/x, continued to 1 at x = 0.
func log1pDiv(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	// Taylor series: the error of the cut is below x³ < 1e-24.
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// expm1Div is (e^x - 1)/x, continued to 1 at x = 0.
func expm1Div(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x/3*(1+0.25*x))
}

// TopShare returns the share of requests that go to the c most popular
// of n keys under a Zipf law with exponent s: the hit ratio of a cache that
// always holds exactly those keys. Under independent requests no cache of c
// entries has a higher expected hit ratio in the long run, so it is the
// ceiling to compare a cache's Zipf hit ratio with. It takes the same time
// for any n (harmonic).
func TopShare(s float64, n, c uint64) float64 {
	c = min(c, n)
	return harmonic(s, c) / harmonic(s, n)
}

// exact is the number of terms harmonic adds one by one; past it
// the Euler–Maclaurin formula takes over.
const exact = 1 << 16

// harmonic returns the generalized harmonic number H(n, s), the sum of
// k^-s for k = 1 … n. Up to exact terms it adds them, from the
// smallest up so that they are not lost against the large partial sum.
// Beyond, it adds the first exact - 1 and takes the rest, the sum of
// f(k) = k^-s for k = a … n with a = exact, from the Euler–Maclaurin
// formula
//
//	∫ f + (f(a) + f(n))/2 + (f1(n) - f1(a))/12 - (f3(n) - f3(a))/720
//
// (f1 and f3 the first and third derivatives), whose next term is of the
// order of s⁵·a^-(s+5), about 10^-24 relative: exact to double precision,
// in constant time. Summing 3·10^8 terms took 7 s, and --keys goes up to
// 2^53.
func harmonic(s float64, n uint64) float64 {
	f := func(k float64) float64 { return math.Pow(k, -s) }
	if n <= exact {
		var sum float64
		for k := n; k >= 1; k-- {
			sum += f(float64(k))
		}
		return sum
	}
	var head float64
	for k := uint64(exact - 1); k >= 1; k-- {
		head += f(float64(k))
	}
	a, b := float64(exact), float64(n)
	// The integral of x^-s from a to b is a^(1-s)·(e^((1-s)·ln(b/a)) - 1)/(1-s),
	// which is a^(1-s)·ln(b/a) at s = 1, without cancellation near it.
	lr := math.Log(b / a)
	integral := math.Pow(a, 1-s) * lr * expm1Div((1-s)*lr)
	f1 := func(x float64) float64 { return -s * math.Pow(x, -s-1) }
	f3 := func(x float64) float64 { return -s * (s + 1) * (s + 2) * math.Pow(x, -s-3) }
	tail := integral + (f(a)+f(b))/2 + (f1(b)-f1(a))/12 - (f3(b)-f3(a))/720
	return head + tail
}
