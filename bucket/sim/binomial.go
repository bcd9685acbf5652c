package sim

import "math"

// float returns a uniform float64 in [0, 1) with 53 random bits.
func (g *stream) float() float64 { return float64(g.next()>>11) * 0x1p-53 }

// binomial draws from the binomial law of n trials with success
// probability p: by inversion when the mean is small, else by Hörmann's
// transformed rejection with squeeze (BTRS, 1993), with the exact log
// ratio of probabilities ([logFactorial]) as the acceptance test.
func (g *stream) binomial(n uint64, p float64) uint64 {
	switch {
	case n == 0 || p <= 0:
		return 0
	case p >= 1:
		return n
	case p > 0.5:
		return n - g.binomial(n, 1-p)
	}
	if float64(n)*p < 10 {
		return g.binomialInversion(n, p)
	}
	return g.binomialBTRS(n, p)
}

// binomialInversion walks the probabilities up from 0 (mean below 10, so
// a dozen steps on average).
func (g *stream) binomialInversion(n uint64, p float64) uint64 {
	q := 1 - p
	s := p / q
	a := float64(n+1) * s
	// Block mode draws several of these per block, most with a tiny mean,
	// whose draw is 0 almost always. P(0) = q^n ≥ 1 - n·p (Bernoulli's
	// inequality), so a uniform u ≤ 1 - n·p is a 0 without computing P(0);
	// otherwise P(0) = exp(n·log1p(-p)), which costs half of math.Pow.
	zero := 1 - float64(n)*p
	r0 := -1.0
	for {
		u := g.float()
		if u <= zero {
			return 0
		}
		if r0 < 0 {
			r0 = math.Exp(float64(n) * math.Log1p(-p))
		}
		r := r0
		var x uint64
		for u > r {
			u -= r
			x++
			if x > n {
				break // rounding left u over: draw again
			}
			r *= a/float64(x) - s
		}
		if x <= n {
			return x
		}
	}
}

func (g *stream) binomialBTRS(n uint64, p float64) uint64 {
	nf := float64(n)
	q := 1 - p
	spq := math.Sqrt(nf * p * q)
	b := 1.15 + 2.53*spq
	a := -0.0873 + 0.0248*b + 0.01*p
	c := nf*p + 0.5
	vr := 0.92 - 4.2/b
	alpha := (2.83 + 5.1/b) * spq
	lpq := math.Log(p / q)
	m := math.Floor((nf + 1) * p)
	h := logFactorial(m) + logFactorial(nf-m)
	for {
		u := g.float() - 0.5
		v := g.float()
		us := 0.5 - math.Abs(u)
		k := math.Floor((2*a/us+b)*u + c)
		if k < 0 || k > nf {
			continue
		}
		if us >= 0.07 && v <= vr {
			return uint64(k)
		}
		v = math.Log(v * alpha / (a/(us*us) + b))
		if v <= h-logFactorial(k)-logFactorial(nf-k)+(k-m)*lpq {
			return uint64(k)
		}
	}
}

// geometric returns the number of failures before the first success of
// trials that succeed with probability p > 0, by inversion.
func (g *stream) geometric(p float64) uint64 {
	if p >= 1 {
		return 0
	}
	u := 1 - g.float() // in (0, 1]
	x := math.Floor(math.Log(u) / math.Log1p(-p))
	if x > 1<<62 {
		return 1 << 62
	}
	return uint64(x)
}

// logFactorial returns ln k! for a whole number k ≥ 0: from a table below
// 256, and above from Stirling's series for ln Γ(k+1), whose first
// omitted term is then under 10⁻²⁰. It agrees with math.Lgamma to a few
// ulps (a test checks) at a fraction of its cost, which BTRS pays up to
// four times per draw.
func logFactorial(k float64) float64 {
	if k < float64(len(logFactorials)) {
		return logFactorials[int(k)]
	}
	x := k + 1
	x2 := x * x
	return (x-0.5)*math.Log(x) - x + lnSqrt2Pi + (1.0/12-(1.0/360-1/(1260*x2))/x2)/x
}

// lnSqrt2Pi is ln √(2π).
const lnSqrt2Pi = 0.91893853320467274178032973640562

var logFactorials = func() (t [256]float64) {
	for k := range t {
		t[k], _ = math.Lgamma(float64(k) + 1)
	}
	return t
}()
