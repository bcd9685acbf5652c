// Package stats has the few statistical tests that twochoice's tests use to
// decide whether a deviation is sampling noise or a bug. Every tolerance is
// derived from the sample size, never tuned by hand.
package stats

import "math"

// ChiSquare returns Pearson's statistic for observed counts against equal
// expected counts, and its degrees of freedom (len(counts) - 1).
func ChiSquare(counts []uint64) (x2 float64, df int) {
	var total uint64
	for _, c := range counts {
		total += c
	}
	e := float64(total) / float64(len(counts))
	for _, c := range counts {
		d := float64(c) - e
		x2 += d * d / e
	}
	return x2, len(counts) - 1
}

// ChiSquareZ turns a chi-square statistic with df degrees of freedom into an
// approximately standard normal score (Wilson and Hilferty, 1931). A score
// above 5 has probability under 3·10⁻⁷ for uniform data.
func ChiSquareZ(x2 float64, df int) float64 {
	k := float64(df)
	v := 2 / (9 * k)
	return (math.Cbrt(x2/k) - (1 - v)) / math.Sqrt(v)
}

// BinomialSigma is the standard deviation of the number of successes in n
// trials that each succeed with probability p.
func BinomialSigma(n int, p float64) float64 {
	return math.Sqrt(float64(n) * p * (1 - p))
}

// Within reports whether got is within z standard deviations of want.
func Within(got, want, sigma, z float64) bool {
	return math.Abs(got-want) <= z*sigma
}
