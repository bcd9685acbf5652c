package fluid

import (
	"fmt"
	"math"
	"testing"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/internal/testutil"
)

// rk4 integrates the equations of docs/theory.md as they are written, in the
// shares themselves, with the classic fourth-order Runge–Kutta method and
// a fixed step: y[j][i] is the share of part j's bins with load ≥ i (one
// part unless goLeft), levels 0 to levels (or capacity), and over the
// fraction of the balls that overflowed. It shares nothing with the solver
// (no logarithms, no level starts, no step control), so agreement checks
// the solver's transformation of the equations as well as its numerics.
func rk4(goLeft bool, d, levels, capacity int, load float64, steps int) (y [][]float64, over float64) {
	parts := 1
	if goLeft {
		parts = d
	}
	L := levels
	if capacity > 0 {
		L = capacity
	}
	n := parts*L + 1
	deriv := func(x []float64, dx []float64) {
		get := func(j, i int) float64 {
			if i == 0 {
				return 1
			}
			if i > L {
				return 0
			}
			return x[j*L+i-1]
		}
		for j := range parts {
			for i := 1; i <= L; i++ {
				var r float64
				if goLeft {
					r = float64(d) * (get(j, i-1) - get(j, i))
					for k := 0; k < j; k++ {
						r *= get(k, i)
					}
					for k := j + 1; k < d; k++ {
						r *= get(k, i-1)
					}
				} else {
					r = math.Pow(get(0, i-1), float64(d)) - math.Pow(get(0, i), float64(d))
				}
				dx[j*L+i-1] = r
			}
		}
		// Overflow, in balls per bin: all candidates full.
		if capacity > 0 {
			o := 1.0
			if goLeft {
				for j := range parts {
					o *= get(j, L)
				}
			} else {
				o = math.Pow(get(0, L), float64(d))
			}
			dx[n-1] = o
		} else {
			dx[n-1] = 0
		}
	}
	x := make([]float64, n)
	k1, k2, k3, k4, tmp := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	h := load / float64(steps)
	for range steps {
		deriv(x, k1)
		for i := range x {
			tmp[i] = x[i] + h/2*k1[i]
		}
		deriv(tmp, k2)
		for i := range x {
			tmp[i] = x[i] + h/2*k2[i]
		}
		deriv(tmp, k3)
		for i := range x {
			tmp[i] = x[i] + h*k3[i]
		}
		deriv(tmp, k4)
		for i := range x {
			x[i] += h / 6 * (k1[i] + 2*k2[i] + 2*k3[i] + k4[i])
		}
	}
	y = make([][]float64, parts)
	for j := range parts {
		y[j] = append([]float64{1}, x[j*L:(j+1)*L]...)
	}
	return y, x[n-1] / load
}

// The solver against rk4, with capacities and at loads far from 1: every
// share above 10⁻⁹ (where the fixed-step integration is good to 10⁻⁹ and
// better), each part's shares and mean load under go-left, and the
// overflow, to 10⁻⁶ relative. Then, from a finer rk4, the whole tail down
// to 10⁻²⁹⁰ to the four digits the package promises (rk4 in the shares
// keeps a relative error on the tails, which grow like t^a at the start:
// float64 holds them down to 10⁻³⁰⁸).
func TestAgainstRK4(t *testing.T) {
	testutil.SkipOneGoroutine(t, "many solves")
	for _, c := range []struct {
		p        bucket.Placement
		d        int
		load     float64
		capacity int
	}{
		{bucket.OneChoice, 1, 10, 8}, {bucket.DChoice, 3, 2.5, 0}, {bucket.DChoice, 4, 10, 8},
		{bucket.GoLeft, 2, 0.3, 2}, {bucket.GoLeft, 3, 10, 4}, {bucket.GoLeft, 4, 2.5, 0},
	} {
		name := fmt.Sprintf("%v/d%d/load%v/cap%d", c.p, c.d, c.load, c.capacity)
		r := solve(t, Params{Placement: c.p, D: c.d, Load: c.load, Capacity: c.capacity})
		y, over := rk4(c.p == bucket.GoLeft, c.d, int(c.load)+20, c.capacity, c.load, 20000)
		for j := range y {
			var load float64
			for i := 1; i < len(y[j]); i++ {
				load += y[j][i]
				if y[j][i] >= 1e-9 && math.Abs(at(r.PartShareAtLeast[j], i)-y[j][i]) > 1e-6*y[j][i] {
					t.Errorf("%s: part %d share ≥ %d = %.9g, rk4 %.9g", name, j, i, at(r.PartShareAtLeast[j], i), y[j][i])
				}
			}
			if math.Abs(r.PartLoad[j]-load) > 1e-6*load {
				t.Errorf("%s: part %d mean load %.9g, rk4 %.9g", name, j, r.PartLoad[j], load)
			}
		}
		if c.capacity > 0 && math.Abs(r.Overflow-over) > 1e-6*over {
			t.Errorf("%s: overflow %.9g, rk4 %.9g", name, r.Overflow, over)
		}
	}
	for _, c := range []struct {
		p    bucket.Placement
		d    int
		load float64
	}{{bucket.DChoice, 2, 1}, {bucket.GoLeft, 3, 1}} {
		r := solve(t, Params{Placement: c.p, D: c.d, Load: c.load})
		y, _ := rk4(c.p == bucket.GoLeft, c.d, len(r.ShareAtLeast)+1, 0, c.load, 200000)
		for i := 1; i < len(r.ShareAtLeast); i++ {
			var s float64
			for j := range y {
				s += y[j][i] / float64(len(y))
			}
			if s >= 1e-290 && !sig4(r.ShareAtLeast[i], s) {
				t.Errorf("%v d=%d load %v: share ≥ %d = %.6g, rk4 %.6g", c.p, c.d, c.load, i, r.ShareAtLeast[i], s)
			}
		}
	}
}

func at(s []float64, k int) float64 {
	if k < len(s) {
		return s[k]
	}
	return 0
}
