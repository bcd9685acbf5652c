// Package fluid solves the fluid-limit equations of balanced allocations:
// the differential equations that the share of bins at each load follows
// as the number of bins n grows, with m = t·n balls thrown.
//
// # Equations
//
// s_i(t) is the fraction of bins with load ≥ i after t·n balls; s_0 = 1.
// Under d-choice (and halves, and double hashing, whose limits are the same)
//
//	ds_i/dt = s_{i-1}^d − s_i^d
//
// and one choice is the case d = 1. Under go-left with d parts, y_{j,i} is
// the fraction of part j's bins with load ≥ i and
//
//	dy_{j,i}/dt = d · (y_{j,i−1} − y_{j,i}) · Π_{k<j} y_{k,i} · Π_{k>j} y_{k,i−1}
//
// with s_i the mean of y_{j,i} over the parts. With bins of capacity C, a
// ball whose candidates are all full overflows; that happens at rate s_C^d
// (d-choice) or Π_j y_{j,C} (go-left), and levels above C do not exist. The
// levels form a triangular system — level i depends on levels i and i−1
// only — so truncating at any level is exact for the levels kept.
//
// # Method
//
// Shares fall doubly exponentially with the level (s_5 ≈ 1.3·10⁻¹² for two
// choices at t = 1), and this package reports every share down to 10⁻³⁰⁰
// to four significant digits or better. A solver in the shares themselves
// would lose the tails to rounding and to absolute error control, so the
// unknowns are the logarithms u = ln s, the independent variable is
// τ = ln t, and the error control is on u, which is relative error on s.
// Near t = 0 level i grows like t^{a_i} with a_i = (d^i − 1)/(d − 1):
// straight lines in (τ, u), which an explicit Runge–Kutta method follows
// with few steps.
//
// A level cannot start at t = 0 (its logarithm is −∞). Each level starts
// when the rate feeding it first reaches e^{−750}, some 26 orders of
// magnitude under the smallest share reported, from the leading term of its
// integral: if the feeding rate r grows like t^g, the level's share is
// r·t/(g+1), and never more than half the share of the level below it
// (in its part). Any error in that starting value is damped by the equations
// and is some 10⁻²⁶ of the share by the time the share reaches 10⁻³⁰⁰.
// Levels that never start hold less than 10⁻³⁰⁰ and are not reported.
//
// The integrator is Dormand and Prince's embedded Runge–Kutta 5(4) pair
// with step-size control on the maximum error of the log-shares, which
// follows the mild stiffness of the tails (the eigenvalues of the
// log-system are about −a_i in τ) by taking shorter steps.
//
// The tests check the solver against closed forms (one choice is Poisson,
// s_1 = tanh t for two choices), against the published values that
// docs/theory.md lists, and
// against conservation: every ball is in some bin or has overflowed.
package fluid
