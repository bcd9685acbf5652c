package workload

import (
	"math"
	"math/bits"
)

// alias is Walker's alias table, built by Vose's method ("A linear
// algorithm for generating random numbers with a given distribution", IEEE
// TSE 17(9), 1991): it draws index i with probability w[i]/Σw in O(1) time
// from one random 64-bit number, after O(n) set-up.
//
// Column i keeps i with probability keep[i]/2^64 and otherwise gives
// alias[i]. A column that keeps i always has alias[i] = i, so no threshold
// needs to express probability 1.
type alias struct {
	keep  []uint64
	alias []uint32
}

// newAlias builds the table for weights w: finite, ≥ 0, with a positive
// sum, at most 2^32 of them (the caller checks).
func newAlias(w []float64) *alias {
	n := len(w)
	var sum float64
	for _, x := range w {
		sum += x
	}
	t := &alias{keep: make([]uint64, n), alias: make([]uint32, n)}
	// Scaled so that the mean column holds exactly 1.
	p := make([]float64, n)
	small := make([]uint32, 0, n)
	large := make([]uint32, 0, n)
	for i, x := range w {
		p[i] = x / sum * float64(n)
		if p[i] < 1 {
			small = append(small, uint32(i))
		} else {
			large = append(large, uint32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		t.keep[s] = uint64(math.Ldexp(max(p[s], 0), 64)) // rounding may leave p[s] just below 0; p[s] < 1
		t.alias[s] = l
		p[l] -= 1 - p[s]
		if p[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	// What is left holds 1 up to rounding: it keeps its own index.
	for _, i := range append(small, large...) {
		t.keep[i], t.alias[i] = math.MaxUint64, i
	}
	return t
}

// draw maps one uniform 64-bit number to an index. The high word of r·n is
// a uniform column and the low word a uniform fraction within it.
func (t *alias) draw(r uint64) int {
	col, frac := bits.Mul64(r, uint64(len(t.keep)))
	if frac < t.keep[col] {
		return int(col)
	}
	return int(t.alias[col])
}
