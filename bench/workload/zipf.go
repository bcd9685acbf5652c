package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Zipf draws ranks 0 … n-1 with P(rank r) proportional to 1/(r+1)^s, for
// any exponent s > 0, and is an endless [Workload] of read requests for
// those ranks as keys (key 0 is the most popular).
//
// The standard library's rand.Zipf needs s > 1, but measured cache
// workloads often have s < 1, so Zipf samples by rejection-inversion
// (W. Hörmann and G. Derflinger, "Rejection-inversion to generate variates
// from monotone discrete distributions", ACM TOMACS 6(3), 1996): it inverts
// the integral of the continuous density x^-s, rounds to the nearest
// integer and accepts the result with a test that makes the law exact. It
// takes O(1) memory and time for any n, and accepts more than 9 draws in
// 10 on average, so a request costs one or two logarithms and exponentials.
type Zipf struct {
	s    float64 // exponent
	n    float64 // number of keys, as a float
	keys uint64  // number of keys
	seed uint64
	rng  rand.PCG

	oneMinusS float64
	hX1       float64 // H(1.5) - 1: the left end of the sampling interval
	hN        float64 // H(n + 0.5): its right end
	squeeze   float64 // a draw within squeeze of its integer needs no test
}

// MaxZipfKeys is the largest n for which every rank is exact as a float64.
const MaxZipfKeys = 1 << 53

// NewZipf returns a Zipf generator over n keys with exponent s (a finite
// s > 0; 1 ≤ n ≤ 2^53) drawing from the given seed.
func NewZipf(s float64, n, seed uint64) (*Zipf, error) {
	if !(s > 0) || math.IsInf(s, 0) {
		return nil, fmt.Errorf("%w: zipf exponent s = %v, want a finite s > 0", ErrParam, s)
	}
	if n < 1 || n > MaxZipfKeys {
		return nil, fmt.Errorf("%w: zipf over %d keys, want 1 to 2^53", ErrParam, n)
	}
	z := &Zipf{s: s, n: float64(n), keys: n, seed: seed, oneMinusS: 1 - s}
	z.rng.Seed(seed, zipfStream)
	z.hX1 = z.hIntegral(1.5) - 1
	z.hN = z.hIntegral(z.n + 0.5)
	z.squeeze = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z, nil
}

// zipfStream is the PCG stream of Zipf generators, so that a Zipf and a
// Uniform given the same seed still draw unrelated numbers.
const zipfStream = 0x7a697066 // "zipf"

// Name returns "zipf(s=S,n=N,seed=SEED)".
func (z *Zipf) Name() string {
	return fmt.Sprintf("zipf(s=%g,n=%d,seed=%d)", z.s, z.keys, z.seed)
}

// Next returns the next rank, in [0, n).
func (z *Zipf) Next() uint64 {
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

// Read fills reqs with read requests for the next ranks. It never fails.
func (z *Zipf) Read(reqs []Request[uint64]) (int, error) {
	for i := range reqs {
		reqs[i] = Request[uint64]{Key: z.Next()}
	}
	return len(reqs), nil
}

// float64 returns a uniform number in [0, 1) with 53 random bits. It calls
// the PCG directly rather than through rand.Rand's interface.
func (z *Zipf) float64() float64 {
	return float64(z.rng.Uint64()>>11) * 0x1p-53
}

// h is the density x^-s.
func (z *Zipf) h(x float64) float64 {
	return math.Exp(-z.s * math.Log(x))
}

// hIntegral is H(x) = (x^(1-s) - 1)/(1-s), an antiderivative of h (log x
// when s = 1), computed without cancellation for s near 1.
func (z *Zipf) hIntegral(x float64) float64 {
	lx := math.Log(x)
	return expm1Div(z.oneMinusS*lx) * lx
}

// hIntegralInverse is the inverse of H.
func (z *Zipf) hIntegralInverse(y float64) float64 {
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

// ZipfTopShare returns the share of requests that go to the c most popular
// of n keys under a Zipf law with exponent s: the hit ratio of a cache that
// always holds exactly those keys. Under independent requests no cache of c
// entries has a higher expected hit ratio in the long run, so it is the
// ceiling to compare a cache's Zipf hit ratio with. It takes the same time
// for any n (zipfHarmonic).
func ZipfTopShare(s float64, n, c uint64) float64 {
	c = min(c, n)
	return zipfHarmonic(s, c) / zipfHarmonic(s, n)
}

// zipfExact is the number of terms zipfHarmonic adds one by one; past it
// the Euler–Maclaurin formula takes over.
const zipfExact = 1 << 16

// zipfHarmonic returns the generalized harmonic number H(n, s), the sum of
// k^-s for k = 1 … n. Up to zipfExact terms it adds them, from the
// smallest up so that they are not lost against the large partial sum.
// Beyond, it adds the first zipfExact - 1 and takes the rest, the sum of
// f(k) = k^-s for k = a … n with a = zipfExact, from the Euler–Maclaurin
// formula
//
//	∫ f + (f(a) + f(n))/2 + (f1(n) - f1(a))/12 - (f3(n) - f3(a))/720
//
// (f1 and f3 the first and third derivatives), whose next term is of the
// order of s⁵·a^-(s+5), about 10^-24 relative: exact to double precision,
// in constant time. Summing 3·10^8 terms took 7 s, and --keys goes up to
// 2^53.
func zipfHarmonic(s float64, n uint64) float64 {
	f := func(k float64) float64 { return math.Pow(k, -s) }
	if n <= zipfExact {
		var sum float64
		for k := n; k >= 1; k-- {
			sum += f(float64(k))
		}
		return sum
	}
	var head float64
	for k := uint64(zipfExact - 1); k >= 1; k-- {
		head += f(float64(k))
	}
	a, b := float64(zipfExact), float64(n)
	// The integral of x^-s from a to b is a^(1-s)·(e^((1-s)·ln(b/a)) - 1)/(1-s),
	// which is a^(1-s)·ln(b/a) at s = 1, without cancellation near it.
	lr := math.Log(b / a)
	integral := math.Pow(a, 1-s) * lr * expm1Div((1-s)*lr)
	f1 := func(x float64) float64 { return -s * math.Pow(x, -s-1) }
	f3 := func(x float64) float64 { return -s * (s + 1) * (s + 2) * math.Pow(x, -s-3) }
	tail := integral + (f(a)+f(b))/2 + (f1(b)-f1(a))/12 - (f3(b)-f3(a))/720
	return head + tail
}
