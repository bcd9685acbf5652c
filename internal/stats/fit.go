package stats

// minExpected is the smallest expected count a cell of Pearson's test may
// have; below it the chi-square approximation of the statistic's law fails,
// so ChiSquareFit pools such cells with their neighbours.
const minExpected = 5

// ChiSquareFit returns Pearson's statistic for observed counts against the
// probabilities p of the same cells (p need not sum to exactly 1; it is
// normalised), and its degrees of freedom. Adjacent cells, taken in order,
// are pooled until each pooled cell expects at least 5 observations; a
// remainder too small to stand alone joins the last pooled cell. Order the
// cells so that neighbours are alike (ranks of a Zipf law, for example).
//
// It panics if len(p) != len(counts) or p has no positive mass: that is a
// bug in the test that calls it, not a property of the data.
func ChiSquareFit(counts []uint64, p []float64) (x2 float64, df int) {
	if len(p) != len(counts) {
		panic("stats: ChiSquareFit: counts and probabilities differ in length")
	}
	var total uint64
	var mass float64
	for i, c := range counts {
		total += c
		mass += p[i]
	}
	if !(mass > 0) {
		panic("stats: ChiSquareFit: no probability mass")
	}
	scale := float64(total) / mass

	var obs, exp []float64 // pooled cells
	var o, e float64
	for i, c := range counts {
		o += float64(c)
		e += p[i] * scale
		if e >= minExpected {
			obs, exp = append(obs, o), append(exp, e)
			o, e = 0, 0
		}
	}
	if e > 0 || o > 0 {
		if len(exp) == 0 {
			obs, exp = append(obs, o), append(exp, e)
		} else {
			obs[len(obs)-1] += o
			exp[len(exp)-1] += e
		}
	}
	for i := range obs {
		if exp[i] == 0 {
			continue // only possible with a single empty pooled cell
		}
		d := obs[i] - exp[i]
		x2 += d * d / exp[i]
	}
	return x2, len(obs) - 1
}
