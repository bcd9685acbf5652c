package sim

import "math"

// float returns a uniform float64 in [0, 1) with 53 random bits.
func (g *stream) float() float64 { return float64(g.next()>>11) * 0x1p-53 }

// binomial draws from the binomial law of n trials with success
// probability p: by inversion when the mean is small, else by Hörmann's
// transformed rejection with squeeze (BTRS, 1993), with the exact log
// ratio of probabilities (math.Lgamma) as the acceptance test.
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
	for {
		r := math.Pow(q, float64(n))
		u := g.float()
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
	lm, _ := math.Lgamma(m + 1)
	lnm, _ := math.Lgamma(nf - m + 1)
	h := lm + lnm
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
		lk, _ := math.Lgamma(k + 1)
		lnk, _ := math.Lgamma(nf - k + 1)
		if v <= h-lk-lnk+(k-m)*lpq {
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
