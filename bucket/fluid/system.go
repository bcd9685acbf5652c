package fluid

import (
	"context"
	"fmt"
	"math"

	"github.com/twochoice/twochoice/bucket"
)

// A cell is one unknown of the log-system: u = ln y for one level of one
// part (or ln s for a level, under the d-choice equations), or the log of
// the number of overflowed balls per bin. Every equation has the form
//
//	du/dτ = e^{G + τ − u} · (1 − e^{λ·(u − u_prev)})
//
// where G, the log of the rate at which balls arrive at the cell, is a
// constant plus a linear combination of earlier cells, and the loss term
// (balls that find the cell's bins already past it) compares u with the
// same part's level below: λ = d under d-choice, 1 under go-left, and no
// loss for the overflow cell.
type cell struct {
	level, part int // level ≥ 1; level 0 marks the overflow cell
	gainConst   float64
	gainIdx     []int
	gainCoef    []float64
	lossCoef    float64 // 0: no loss term
	lossPrev    int     // the cell u is compared with; -1 for level 0 (u = 0)
}

// logStart is where a cell starts: e^{-750} is 26 orders of magnitude
// below the smallest share reported.
var logStart = math.Log(DefaultFloor) - 60

// ctxEvery is how many steps (a few milliseconds of them at most) the
// solver takes between looks at its context.
const ctxEvery = 1024

// maxCells bounds the work for absurd loads (about 10^5 levels).
const maxCells = 1 << 17

type system struct {
	ctx      context.Context // checked every ctxEvery steps
	progress func(float64)   // if not nil, told (t/Load)² every ctxEvery steps
	p        Params
	goLeft   bool
	d        int
	cells    []cell
	x        []float64 // log values of the active cells: cells[:len(x)]
	tau      float64
	steps    int
	rejected int // steps tried and rejected
	// scratch for the integrator
	k       [7][]float64
	tmp, dx []float64
}

func newSystem(p Params) *system {
	return &system{p: p, goLeft: p.Placement == bucket.GoLeft, d: p.D}
}

// cellsPerLevel is d under go-left (one per part) and 1 otherwise.
func (s *system) cellsPerLevel() int {
	if s.goLeft {
		return s.d
	}
	return 1
}

// cellAt returns cell i, building the cell list level by level as needed.
// It reports false past the end (the overflow cell, under a capacity, is
// the last one).
func (s *system) cellAt(i int) (*cell, bool) {
	for len(s.cells) <= i {
		if !s.addLevel() {
			return nil, false
		}
	}
	return &s.cells[i], true
}

// addLevel appends the cells of the next level, or the overflow cell after
// the level at capacity. It reports false when there is nothing to add.
func (s *system) addLevel() bool {
	per := s.cellsPerLevel()
	level := len(s.cells)/per + 1
	c := s.p.Capacity
	if len(s.cells) >= maxCells {
		return false
	}
	if c > 0 && level > c {
		if len(s.cells) == c*per {
			s.cells = append(s.cells, s.overflowCell())
			return true
		}
		return false
	}
	base := (level - 1) * per // index of this level's first cell
	for j := 0; j < per; j++ {
		prev := -1
		if level > 1 {
			prev = base - per + j
		}
		cl := cell{level: level, part: j, lossPrev: prev}
		if s.goLeft {
			// Gain: d · y_{j,i-1} · Π_{k<j} y_{k,i} · Π_{k>j} y_{k,i-1}.
			cl.gainConst = math.Log(float64(s.d))
			cl.lossCoef = 1
			if prev >= 0 {
				cl.addGain(prev, 1)
			}
			for k := 0; k < j; k++ {
				cl.addGain(base+k, 1)
			}
			if level > 1 {
				for k := j + 1; k < per; k++ {
					cl.addGain(base-per+k, 1)
				}
			}
		} else {
			// Gain: s_{i-1}^d.
			cl.lossCoef = float64(s.d)
			if prev >= 0 {
				cl.addGain(prev, float64(s.d))
			}
		}
		s.cells = append(s.cells, cl)
	}
	return true
}

// overflowCell gains s_C^d (d-choice) or Π_j y_{j,C} (go-left), and loses
// nothing.
func (s *system) overflowCell() cell {
	per := s.cellsPerLevel()
	top := (s.p.Capacity - 1) * per
	cl := cell{lossPrev: -1}
	for j := 0; j < per; j++ {
		if s.goLeft {
			cl.addGain(top+j, 1)
		} else {
			cl.addGain(top, float64(s.d))
		}
	}
	return cl
}

func (c *cell) addGain(i int, coef float64) {
	c.gainIdx = append(c.gainIdx, i)
	c.gainCoef = append(c.gainCoef, coef)
}

// gain returns G for cell c from the values x (which must include every cell
// c depends on).
func (c *cell) gain(x []float64) float64 {
	g := c.gainConst
	for n, i := range c.gainIdx {
		g += c.gainCoef[n] * x[i]
	}
	return g
}

// deriv writes du/dτ of every active cell at (tau, x) into dx.
func (s *system) deriv(tau float64, x, dx []float64) {
	for i := range x {
		c := &s.cells[i]
		u := x[i]
		rate := math.Exp(c.gain(x) + tau - u)
		if c.lossCoef != 0 {
			prev := 0.0
			if c.lossPrev >= 0 {
				prev = x[c.lossPrev]
			}
			// 1 − e^{λ(u − prev)}, accurate when u is close to prev (a
			// level nearly as full as the one below it).
			rate *= -math.Expm1(c.lossCoef * (u - prev))
		}
		dx[i] = rate
	}
}

// activate starts every cell whose arrival rate has reached e^{logStart}
// (see the package doc), in order, at the current time.
func (s *system) activate() {
	for {
		i := len(s.x)
		c, ok := s.cellAt(i)
		if !ok {
			return
		}
		g := c.gain(s.x)
		if g+s.tau < logStart {
			return
		}
		// The arrival rate grows like t^slope; its integral is rate·t/(slope+1).
		s.dx = grow(s.dx, len(s.x))
		s.deriv(s.tau, s.x, s.dx)
		slope := 0.0
		for n, j := range c.gainIdx {
			slope += c.gainCoef[n] * s.dx[j]
		}
		start := g + s.tau - math.Log1p(math.Max(slope, 0))
		// A level holds fewer bins than the one below it (in its part). The
		// estimate can say otherwise when the level below is young and
		// still catching up (its slope is then far below its true one):
		// one choice at loads past 300, where levels start at large t.
		// Started above the level below, a level falls (its loss term
		// wins), the next one's estimate, with no slope to divide by,
		// starts it higher still, and activation runs away. So start it
		// at least a factor 2 under the level below; the equations damp
		// the error of the start (see the package doc).
		if c.lossCoef != 0 {
			below := 0.0
			if c.lossPrev >= 0 {
				below = s.x[c.lossPrev]
			}
			start = math.Min(start, below-math.Ln2)
		}
		s.x = append(s.x, start)
	}
}

// nextGain returns G + τ of the first inactive cell at (tau, x), or -Inf.
func (s *system) nextGain(tau float64, x []float64) float64 {
	c, ok := s.cellAt(len(x))
	if !ok {
		return math.Inf(-1)
	}
	return c.gain(x) + tau
}

func grow(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n, 2*n)
	}
	return b[:n]
}

// Dormand–Prince 5(4): nodes and stage weights. The fifth-order solution's
// weights are the last row of dpA (the method is "first same as last": the
// seventh stage is evaluated at the new solution); dpErrW is those weights
// minus the embedded fourth-order ones.
var (
	dpC = [7]float64{0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1, 1}
	dpA = [7][6]float64{
		{},
		{1.0 / 5},
		{3.0 / 40, 9.0 / 40},
		{44.0 / 45, -56.0 / 15, 32.0 / 9},
		{19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
		{9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
		{35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84},
	}
	dpErrW = [7]float64{
		35.0/384 - 5179.0/57600, 0, 500.0/1113 - 7571.0/16695, 125.0/192 - 393.0/640,
		-2187.0/6784 + 92097.0/339200, 11.0/84 - 187.0/2100, -1.0 / 40,
	}
)

// tol is the error allowed per step on each log-share, i.e. a relative
// error of 10⁻¹¹ on each share; global errors stay many orders below the
// four significant digits promised.
const tol = 1e-10

// run integrates from a small start time to τ = tauEnd.
func (s *system) run(tauEnd float64) error {
	// Start where the first level is still linear in t to 12 digits, in
	// log time: t = load·10^-6 underflows to a subnormal or to 0 (τ = -Inf)
	// below a load of about 1e-302.
	s.tau = math.Min(math.Log(1e-12), tauEnd+math.Log(1e-6))
	s.activate()
	h := 1e-3
	for s.tau < tauEnd {
		if s.steps > 50_000_000 {
			return fmt.Errorf("%w: the solver did not converge (load %v, d %d)", ErrParams, s.p.Load, s.d)
		}
		if (s.steps+s.rejected)%ctxEvery == 0 {
			if s.ctx != nil {
				if err := s.ctx.Err(); err != nil {
					return err
				}
			}
			if s.progress != nil {
				f := math.Exp(s.tau - tauEnd) // t/Load
				s.progress(f * f)
			}
		}
		last := false
		if s.tau+h >= tauEnd {
			h, last = tauEnd-s.tau, true
		}
		xNew, errNorm := s.step(h)
		// Reject a step that errs too much, or that carries the next cell
		// far past its start (it would start from a poor estimate).
		overshoot := s.nextGain(s.tau+h, xNew) > logStart+20
		if !(errNorm <= 1) || overshoot {
			switch {
			case math.IsNaN(errNorm) || math.IsInf(errNorm, 0):
				h /= 4 // a trial stage left the range of exp
			case errNorm > 1:
				h *= math.Max(0.2, 0.9*math.Pow(errNorm, -0.2))
			default:
				h /= 2
			}
			s.rejected++
			if h < 1e-12 {
				return fmt.Errorf("%w: the solver's step vanished at t = %g (load %v, d %d)", ErrParams, math.Exp(s.tau), s.p.Load, s.d)
			}
			continue
		}
		s.steps++
		copy(s.x, xNew)
		if last {
			s.tau = tauEnd
		} else {
			s.tau += h
		}
		s.activate()
		factor := 5.0
		if errNorm > 0 {
			factor = math.Min(5, math.Max(0.2, 0.9*math.Pow(errNorm, -0.2)))
		}
		h *= factor
	}
	return nil
}

// step takes one Dormand–Prince step of size h from (s.tau, s.x) and returns
// the new values and the error norm (≤ 1 is acceptable).
func (s *system) step(h float64) ([]float64, float64) {
	n := len(s.x)
	for i := range s.k {
		s.k[i] = grow(s.k[i], n)
	}
	s.tmp = grow(s.tmp, n)
	s.deriv(s.tau, s.x, s.k[0])
	for st := 1; st < 7; st++ {
		for i := 0; i < n; i++ {
			v := s.x[i]
			for j := 0; j < st; j++ {
				v += h * dpA[st][j] * s.k[j][i]
			}
			s.tmp[i] = v
		}
		s.deriv(s.tau+dpC[st]*h, s.tmp, s.k[st])
	}
	// Stage 7 was evaluated at the fifth-order solution, which is s.tmp now.
	out := make([]float64, n)
	copy(out, s.tmp)
	errNorm := 0.0
	for i := 0; i < n; i++ {
		e := 0.0
		for j := 0; j < 7; j++ {
			e += dpErrW[j] * s.k[j][i]
		}
		errNorm = math.Max(errNorm, math.Abs(h*e)/tol)
		if math.IsNaN(out[i]) || math.IsInf(out[i], 0) {
			errNorm = math.NaN()
		}
	}
	return out, errNorm
}

// result turns the log values at the end time into shares.
func (s *system) result() *Result {
	per := s.cellsPerLevel()
	parts := s.p.Placement.Parts(s.d)
	floor := s.p.Floor
	r := &Result{Steps: s.steps, ShareAtLeast: []float64{1}}
	partShares := make([][]float64, per)
	partLoad := make([]float64, per)
	for j := range partShares {
		partShares[j] = []float64{1}
	}
	levels := 0
	for i, u := range s.x {
		c := &s.cells[i]
		if c.level == 0 {
			r.Overflow = math.Exp(u) / s.p.Load
			if r.Overflow < floor {
				r.Overflow = 0
			}
			continue
		}
		y := math.Exp(u)
		partLoad[c.part] += y
		levels = max(levels, c.level)
	}
	for level := 1; level <= levels; level++ {
		var sum float64
		ys := make([]float64, per)
		for j := 0; j < per; j++ {
			i := (level-1)*per + j
			if i < len(s.x) {
				ys[j] = math.Exp(s.x[i])
			}
			sum += ys[j]
		}
		share := sum / float64(per)
		if share < floor {
			break
		}
		r.ShareAtLeast = append(r.ShareAtLeast, share)
		for j := range ys {
			if ys[j] < floor {
				ys[j] = 0
			}
			partShares[j] = append(partShares[j], ys[j])
		}
	}
	if per == parts {
		r.PartShareAtLeast, r.PartLoad = partShares, partLoad
	} else {
		// Halves: the d parts are alike under the d-choice equations.
		for range parts {
			r.PartShareAtLeast = append(r.PartShareAtLeast, partShares[0])
			r.PartLoad = append(r.PartLoad, partLoad[0])
		}
	}
	return r
}
