package fluid

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/twochoice/twochoice/bucket"
)

// DefaultFloor is the smallest share reported when Params.Floor is zero,
// and the smallest Floor accepted.
const DefaultFloor = 1e-300

// MaxChoices is the largest d the solver accepts.
const MaxChoices = 64

// ErrParams is returned for parameters the equations do not cover.
var ErrParams = errors.New("fluid: bad parameters")

// Params says which limit to solve.
type Params struct {
	// Placement selects the equations: GoLeft has its own; every other rule
	// follows the d-choice equations (OneChoice with d = 1).
	Placement bucket.Placement
	// D is the number of choices: 1 for OneChoice, 1 to MaxChoices otherwise.
	D int
	// Load is m/n, the number of balls per bin; it must be positive.
	Load float64
	// Capacity is the most balls a bin holds; 0 means unbounded. A ball
	// whose candidates are all full overflows (into a stash, in a table).
	Capacity int
	// Floor is the smallest share reported; 0 means DefaultFloor.
	Floor float64
}

// Result is the state of the limit at t = Load.
type Result struct {
	// ShareAtLeast[k] is the fraction of bins with load ≥ k: [0] is 1, and
	// the slice ends at the last k whose share is at least Floor (or at the
	// capacity).
	ShareAtLeast []float64 `json:"share_at_least"`
	// PartShareAtLeast is ShareAtLeast for each part's bins: d parts under
	// GoLeft and Halves, else one. Entries are zero where a part's share is
	// below Floor.
	PartShareAtLeast [][]float64 `json:"part_share_at_least"`
	// PartLoad is the mean load of each part's bins.
	PartLoad []float64 `json:"part_load"`
	// Overflow is, with a capacity, the fraction of all balls that found
	// every candidate full (0 when under Floor).
	Overflow float64 `json:"overflow"`
	// Steps is the number of integration steps taken (for the curious).
	Steps int `json:"-"`
}

func (p *Params) check() error {
	if !p.Placement.Valid() {
		return fmt.Errorf("%w: unknown placement %d", ErrParams, uint8(p.Placement))
	}
	if p.Placement == bucket.OneChoice && p.D != 1 {
		return fmt.Errorf("%w: one choice has d = 1, not %d", ErrParams, p.D)
	}
	if p.D < 1 || p.D > MaxChoices {
		return fmt.Errorf("%w: d = %d (want 1 to %d)", ErrParams, p.D, MaxChoices)
	}
	if !(p.Load > 0) || math.IsInf(p.Load, 0) {
		return fmt.Errorf("%w: load %v (want a positive, finite m/n)", ErrParams, p.Load)
	}
	if p.Load > MaxLoad {
		return fmt.Errorf("%w: load %v is above %d, past which the solver would run for minutes to hours", ErrParams, p.Load, MaxLoad)
	}
	if p.Capacity < 0 {
		return fmt.Errorf("%w: capacity %d", ErrParams, p.Capacity)
	}
	if p.Floor == 0 {
		p.Floor = DefaultFloor
	}
	if !(p.Floor >= DefaultFloor && p.Floor < 1) {
		return fmt.Errorf("%w: floor %v (want %g to 1)", ErrParams, p.Floor, DefaultFloor)
	}
	return nil
}

// MaxLoad is the largest Load Solve takes. The solver's work grows about
// with the square of the load (one cell per level, and steps in
// proportion), and with d² under go-left: on a 2-core 2.3 GHz machine a
// load of 256 takes 1 to 5 s for d = 2, go-left with d = 8 takes 36 s at a
// load of 100, and 1024 takes a minute or more. Loads above MaxLoad would
// take hours; at loads this high the shares are close to a Poisson
// spread around m/n anyway.
const MaxLoad = 1024

// Solve integrates the equations from t = 0 to t = p.Load.
func Solve(p Params) (*Result, error) {
	return SolveContext(context.Background(), p)
}

// SolveContext is Solve, giving up with ctx's error when ctx is done: a
// solve at a high load or with many choices can take a while (MaxLoad).
func SolveContext(ctx context.Context, p Params) (*Result, error) {
	return SolveProgress(ctx, p, nil)
}

// SolveProgress is SolveContext that tells progress, if it is not nil,
// how far the solve has come: a fraction of its work from 0 to 1, every
// ctxEvery steps (a few milliseconds) and once at the end. The work grows
// about with the square of t (see MaxLoad), so the fraction is (t/Load)²:
// an estimate, good enough for a progress bar over a solve that takes
// seconds to a minute.
func SolveProgress(ctx context.Context, p Params, progress func(done float64)) (*Result, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	s := newSystem(p)
	s.ctx, s.progress = ctx, progress
	if err := s.run(logPositive(p.Load)); err != nil {
		return nil, err
	}
	if progress != nil {
		progress(1)
	}
	return s.result(), nil
}

// logPositive is ln x for x > 0, subnormals included: math.Log does not
// normalise a subnormal argument on amd64 (golang/go#56600) and gives about
// -709.09, ln 2^-1023, for all of them (ln 1e-316 is -727.6).
func logPositive(x float64) float64 {
	if x >= 0x1p-1022 {
		return math.Log(x)
	}
	frac, exp := math.Frexp(x)
	return math.Log(frac) + float64(exp)*math.Ln2
}

// OverflowAt returns the fraction of keys that overflow bins of capacity C
// at utilization u = m/(n·C) under rule p with d choices: the sizing figure
// of docs/theory.md, from which the store takes its growth thresholds.
func OverflowAt(p bucket.Placement, d, capacity int, utilization float64) (float64, error) {
	return OverflowAtContext(context.Background(), p, d, capacity, utilization)
}

// OverflowAtContext is OverflowAt, giving up with ctx's error when ctx is
// done (see SolveContext): the load it solves at is u·C.
func OverflowAtContext(ctx context.Context, p bucket.Placement, d, capacity int, utilization float64) (float64, error) {
	if capacity < 1 {
		return 0, fmt.Errorf("%w: capacity %d (want ≥ 1)", ErrParams, capacity)
	}
	if !(utilization > 0) || math.IsInf(utilization, 0) {
		return 0, fmt.Errorf("%w: utilization %v", ErrParams, utilization)
	}
	r, err := SolveContext(ctx, Params{Placement: p, D: d, Load: utilization * float64(capacity), Capacity: capacity})
	if err != nil {
		return 0, err
	}
	return r.Overflow, nil
}
