package fluid

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/internal/testutil"
)

// sig4 reports whether got equals want to four significant digits.
func sig4(got, want float64) bool {
	return math.Abs(got-want) <= 5e-5*math.Abs(want)
}

func solve(t *testing.T, p Params) *Result {
	t.Helper()
	r, err := Solve(p)
	if err != nil {
		t.Fatalf("Solve(%+v): %v", p, err)
	}
	return r
}

// The shares at m = n that docs/theory.md lists, to 4 to 7 digits.
func TestReferenceValues(t *testing.T) {
	cases := []struct {
		p    bucket.Placement
		d    int
		want []float64
	}{
		{bucket.OneChoice, 1, []float64{0.632121, 0.264241, 0.080301, 0.018988, 0.00366}},
		{bucket.DChoice, 2, []float64{0.761594, 0.229505, 0.0088953, 6.0473e-6, 1.3346e-12}},
		{bucket.GoLeft, 2, []float64{0.771675, 0.2238497, 0.0044751, 5.1524e-8, 1.2229e-21}},
	}
	for _, c := range cases {
		r := solve(t, Params{Placement: c.p, D: c.d, Load: 1})
		for k, want := range c.want {
			got := r.ShareAtLeast[k+1]
			// The table rounds to its last digit; accept half a unit of it.
			digits := math.Pow(10, math.Floor(math.Log10(want))-float64(len(fmt.Sprint(want))-3))
			if math.Abs(got-want) > math.Max(5e-5*want, digits) {
				t.Errorf("%v d=%d: share ≥ %d = %.7g, want %g", c.p, c.d, k+1, got, want)
			}
		}
	}
	// The same equations serve halves and double hashing.
	dc := solve(t, Params{Placement: bucket.DChoice, D: 2, Load: 1})
	for _, p := range []bucket.Placement{bucket.Halves, bucket.DoubleHash} {
		r := solve(t, Params{Placement: p, D: 2, Load: 1})
		for k := range dc.ShareAtLeast {
			if r.ShareAtLeast[k] != dc.ShareAtLeast[k] {
				t.Errorf("%v differs from dchoice at k=%d", p, k)
			}
		}
	}
}

func TestGoLeftLeftPart(t *testing.T) {
	r := solve(t, Params{Placement: bucket.GoLeft, D: 2, Load: 1})
	left := r.PartLoad[0] / (r.PartLoad[0] + r.PartLoad[1])
	if math.Abs(left-0.6112) > 0.00005 {
		t.Fatalf("left half holds %.5f of the balls, want 0.6112", left)
	}
	if len(r.PartShareAtLeast) != 2 {
		t.Fatalf("%d parts", len(r.PartShareAtLeast))
	}
	// The left part is fuller at every level.
	for k := 1; k < len(r.ShareAtLeast); k++ {
		if r.PartShareAtLeast[0][k] < r.PartShareAtLeast[1][k] {
			t.Errorf("level %d: left %g < right %g", k, r.PartShareAtLeast[0][k], r.PartShareAtLeast[1][k])
		}
	}
}

// logPoissonTail returns ln P(X ≥ k) for X ~ Poisson(t), summed in log
// space so that it stays exact far below the float64 range.
func logPoissonTail(t float64, k int) float64 {
	lt := math.Log(t)
	term := func(j int) float64 {
		lg, _ := math.Lgamma(float64(j + 1))
		return -t + float64(j)*lt - lg
	}
	top := term(k)
	for j := k; j < k+int(t)+200; j++ {
		top = math.Max(top, term(j))
	}
	var sum float64
	for j := k; j < k+int(t)+400; j++ {
		sum += math.Exp(term(j) - top)
	}
	return top + math.Log(sum)
}

// One choice is Poisson: every share, down to 1e-300, to 4 digits.
func TestOneChoiceIsPoisson(t *testing.T) {
	testutil.SkipOneGoroutine(t, "many solves")
	for _, load := range []float64{0.25, 1, 4.5, 20} {
		r := solve(t, Params{Placement: bucket.OneChoice, D: 1, Load: load})
		if len(r.ShareAtLeast) < 60 {
			t.Fatalf("load %v: only %d levels reported", load, len(r.ShareAtLeast))
		}
		for k := 1; k < len(r.ShareAtLeast); k++ {
			want := math.Exp(logPoissonTail(load, k))
			if !sig4(r.ShareAtLeast[k], want) {
				t.Fatalf("load %v: share ≥ %d = %.6g, want %.6g (Poisson)", load, k, r.ShareAtLeast[k], want)
			}
		}
		// The list stops exactly where the Poisson tail drops below 1e-300.
		next := logPoissonTail(load, len(r.ShareAtLeast))
		last := logPoissonTail(load, len(r.ShareAtLeast)-1)
		if next >= math.Log(DefaultFloor) || last < math.Log(DefaultFloor) {
			t.Fatalf("load %v: list ends at k=%d; tail there %g, next %g", load, len(r.ShareAtLeast)-1, math.Exp(last), math.Exp(next))
		}
	}
}

// Two choices: s_1 = tanh t exactly (ds_1/dt = 1 − s_1²).
func TestTwoChoicesTanh(t *testing.T) {
	for _, load := range []float64{0.1, 1, 3} {
		r := solve(t, Params{Placement: bucket.DChoice, D: 2, Load: load})
		if got := r.ShareAtLeast[1]; math.Abs(got-math.Tanh(load)) > 1e-9 {
			t.Errorf("load %v: s_1 = %.12g, want tanh = %.12g", load, got, math.Tanh(load))
		}
	}
}

// Every ball is in a bin (mean load = Σ_k s_k) or has overflowed, for every
// rule, d, load and capacity.
func TestConservation(t *testing.T) {
	testutil.SkipOneGoroutine(t, "many solves")
	for _, p := range bucket.Placements() {
		for _, d := range []int{1, 2, 3, 8} {
			if p == bucket.OneChoice && d != 1 {
				continue
			}
			for _, load := range []float64{0.01, 1, 6.5} {
				for _, capacity := range []int{0, 1, 8} {
					name := fmt.Sprintf("%v/d%d/load%v/cap%d", p, d, load, capacity)
					r := solve(t, Params{Placement: p, D: d, Load: load, Capacity: capacity})
					var mean float64
					for _, pl := range r.PartLoad {
						mean += pl / float64(len(r.PartLoad))
					}
					total := mean + r.Overflow*load
					if math.Abs(total-load) > 1e-8*load {
						t.Errorf("%s: mean load %.12g + overflow %.3g·load = %.12g, want %v", name, mean, r.Overflow, total, load)
					}
					for k := 1; k < len(r.ShareAtLeast); k++ {
						if r.ShareAtLeast[k] > r.ShareAtLeast[k-1] {
							t.Errorf("%s: share rises from level %d to %d", name, k-1, k)
						}
					}
					if capacity > 0 && len(r.ShareAtLeast) > capacity+1 {
						t.Errorf("%s: %d levels above capacity", name, len(r.ShareAtLeast)-capacity-1)
					}
				}
			}
		}
	}
}

// More choices and the go-left tie-break both thin the tail.
func TestTailOrdering(t *testing.T) {
	for _, d := range []int{2, 3, 4} {
		dc := solve(t, Params{Placement: bucket.DChoice, D: d, Load: 1})
		gl := solve(t, Params{Placement: bucket.GoLeft, D: d, Load: 1})
		more := solve(t, Params{Placement: bucket.DChoice, D: d + 1, Load: 1})
		for k := 3; k < len(gl.ShareAtLeast); k++ {
			if gl.ShareAtLeast[k] >= dc.ShareAtLeast[k] {
				t.Errorf("d=%d level %d: goleft %g ≥ dchoice %g", d, k, gl.ShareAtLeast[k], dc.ShareAtLeast[k])
			}
		}
		for k := 3; k < len(more.ShareAtLeast); k++ {
			if more.ShareAtLeast[k] >= dc.ShareAtLeast[k] {
				t.Errorf("level %d: d=%d share %g ≥ d=%d share %g", k, d+1, more.ShareAtLeast[k], d, dc.ShareAtLeast[k])
			}
		}
	}
}

// The sizing table of docs/theory.md (capacity 8), to its two digits.
func TestSizingTable(t *testing.T) {
	testutil.SkipOneGoroutine(t, "many solves")
	us := []float64{0.70, 0.75, 0.80, 0.85, 0.90, 0.95}
	rows := []struct {
		p    bucket.Placement
		d    int
		want []float64
	}{
		{bucket.OneChoice, 1, []float64{0.040, 0.052, 0.067, 0.083, 0.101, 0.120}},
		{bucket.DChoice, 2, []float64{2.2e-7, 1.1e-5, 1.9e-4, 1.5e-3, 6.8e-3, 0.020}},
		{bucket.GoLeft, 2, []float64{3.0e-10, 3.4e-7, 3.5e-5, 7.1e-4, 4.9e-3, 0.017}},
		{bucket.GoLeft, 4, []float64{0, 4.1e-139, 1.6e-49, 2.8e-18, 1.8e-7, 8.6e-4}},
	}
	for _, row := range rows {
		for i, u := range us {
			got, err := OverflowAt(row.p, row.d, 8, u)
			if err != nil {
				t.Fatal(err)
			}
			want := row.want[i]
			if want == 0 {
				// "~0": below the floor of 1e-300.
				if got != 0 {
					t.Errorf("%v d=%d u=%v: %g, want below 1e-300", row.p, row.d, u, got)
				}
				continue
			}
			// Two significant digits.
			if math.Abs(got-want) > 0.051*want {
				t.Errorf("%v d=%d u=%v: overflow %.3g, want %g", row.p, row.d, u, got, want)
			}
		}
	}
}

func TestBadParams(t *testing.T) {
	bad := []Params{
		{Placement: bucket.DChoice, D: 0, Load: 1},
		{Placement: bucket.DChoice, D: 65, Load: 1},
		{Placement: bucket.OneChoice, D: 2, Load: 1},
		{Placement: bucket.DChoice, D: 2, Load: 0},
		{Placement: bucket.DChoice, D: 2, Load: math.NaN()},
		{Placement: bucket.DChoice, D: 2, Load: math.Inf(1)},
		{Placement: bucket.DChoice, D: 2, Load: 1, Capacity: -1},
		{Placement: bucket.DChoice, D: 2, Load: 1, Floor: 1e-310},
		{Placement: bucket.Placement(9), D: 2, Load: 1},
	}
	for _, p := range bad {
		if _, err := Solve(p); !errors.Is(err, ErrParams) {
			t.Errorf("Solve(%+v) = %v, want ErrParams", p, err)
		}
	}
	if _, err := OverflowAt(bucket.DChoice, 2, 0, 0.5); !errors.Is(err, ErrParams) {
		t.Errorf("OverflowAt capacity 0: %v", err)
	}
}

func TestFloor(t *testing.T) {
	r := solve(t, Params{Placement: bucket.DChoice, D: 2, Load: 1, Floor: 1e-10})
	if len(r.ShareAtLeast) != 5 { // 1, s1..s4; s5 = 1.3e-12 is under the floor
		t.Fatalf("floor 1e-10: %v", r.ShareAtLeast)
	}
}

func BenchmarkSolve(b *testing.B) {
	for _, c := range []struct {
		p    bucket.Placement
		d    int
		load float64
	}{{bucket.DChoice, 2, 1}, {bucket.GoLeft, 2, 1}, {bucket.GoLeft, 8, 1}, {bucket.DChoice, 2, 100}, {bucket.OneChoice, 1, 1}} {
		b.Run(fmt.Sprintf("%v/d%d/load%v", c.p, c.d, c.load), func(b *testing.B) {
			for b.Loop() {
				if _, err := Solve(Params{Placement: c.p, D: c.d, Load: c.load}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Loads past MaxLoad are refused up front, and a solve stops when its
// context is done instead of running on.
func TestSolveBounds(t *testing.T) {
	for _, p := range []Params{
		{Placement: bucket.DChoice, D: 2, Load: MaxLoad * 1.5},
		{Placement: bucket.GoLeft, D: 2, Load: 1e300},
	} {
		if _, err := Solve(p); !errors.Is(err, ErrParams) {
			t.Errorf("Solve(%+v): %v, want ErrParams", p, err)
		}
	}
	if _, err := OverflowAt(bucket.GoLeft, 2, 100000, 0.9); !errors.Is(err, ErrParams) {
		t.Errorf("OverflowAt at capacity 100000: %v, want ErrParams", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := SolveContext(ctx, Params{Placement: bucket.GoLeft, D: 8, Load: 100}); !errors.Is(err, context.Canceled) {
		t.Errorf("SolveContext with a canceled context: %v, want context.Canceled", err)
	}
}

// One choice at a high load: the levels of the tail start at large t, where
// a start estimate from a young level below can put the new level above it
// (a share larger than the share below it is impossible, and each new level
// then started higher still: the solver hung at loads past about 310, adding
// levels until maxCells). Every share stays Poisson to 4 digits.
// (320 is the smallest round load that hung: the run-away started at
// t = 311.)
func TestOneChoiceIsPoissonAtHighLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("a solve of 5 s; TestLevelStartsBelowTheLevelUnder checks the start in the short suite")
	}
	const load = 320
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := SolveContext(ctx, Params{Placement: bucket.OneChoice, D: 1, Load: load})
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k < len(r.ShareAtLeast); k++ {
		want := math.Exp(logPoissonTail(load, k))
		if !sig4(r.ShareAtLeast[k], want) {
			t.Fatalf("load %v: share ≥ %d = %.6g, want %.6g (Poisson)", load, k, r.ShareAtLeast[k], want)
		}
	}
}

// A level starts strictly below the level under it (in the same part),
// whatever the estimate of its start says: here the level below is young,
// nearly as full as its own level below, so its slope is small and the
// estimate rate·t/(slope+1) lies above it.
func TestLevelStartsBelowTheLevelUnder(t *testing.T) {
	s := newSystem(Params{Placement: bucket.OneChoice, D: 1, Load: 400, Floor: DefaultFloor})
	s.tau = math.Log(311)
	// Three active levels whose shares fall slowly, the last just under the
	// start threshold once multiplied by t.
	top := logStart - s.tau + 0.5
	s.x = []float64{top + 2, top + 1, top + 0.25}
	for range s.x {
		s.cellAt(len(s.cells))
	}
	// An activation that gets this wrong runs away: each level starts above
	// the last, until maxCells, for minutes. Fail fast instead of waiting.
	done := make(chan struct{})
	go func() { s.activate(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("activate did not return in 10 s: levels started one above the other")
	}
	if len(s.x) > 10 {
		t.Fatalf("activate started %d levels at once", len(s.x)-3)
	}
	for i := 1; i < len(s.x); i++ {
		if s.x[i] >= s.x[i-1] {
			t.Fatalf("level %d starts at ln s = %v, not below level %d's %v", i+1, s.x[i], i, s.x[i-1])
		}
	}
}

// At a load so small that it, or the start time load·10^-6, is a
// subnormal float64, the solver still integrates from the right start to
// the right end: the first level holds every ball (s_1 = t to first
// order), so the mean load is the load (d-choice) and go-left's left part
// holds all of it (twice the load per bin with d = 2). math.Log does not
// normalise subnormals on amd64 (golang/go#56600: ln 1e-316 came out as
// -709.09, not -727.6), so these gave a mean load of 2.2e-308, the
// smallest normal float64, at every load below it, and 'twochoice fluid
// --load 1e-320 --rule goleft' said the left part held 111254931503446.55%
// of the balls.
func TestSubnormalLoads(t *testing.T) {
	for _, load := range []float64{1e-303, 3e-306, 1e-310, 1e-316, 1e-320} {
		for _, c := range []struct {
			p    bucket.Placement
			part float64 // part 0's mean load over the load
		}{{bucket.DChoice, 1}, {bucket.OneChoice, 1}, {bucket.GoLeft, 2}} {
			d := 2
			if c.p == bucket.OneChoice {
				d = 1
			}
			r, err := Solve(Params{Placement: c.p, D: d, Load: load})
			if err != nil {
				t.Fatalf("%v at load %g: %v", c.p, load, err)
			}
			// A subnormal carries fewer digits: 1e-320 is 2024 steps of
			// 5e-324, so allow 1e-3 there, 1e-9 on normal floats.
			tol := 1e-9
			if load < 0x1p-1022 {
				tol = 1e-3
			}
			if got, want := r.PartLoad[0], c.part*load; math.Abs(got-want) > tol*want {
				t.Errorf("%v at load %g: part 0's mean load %g, want %g", c.p, load, got, want)
			}
			if len(r.ShareAtLeast) != 1 {
				t.Errorf("%v at load %g: shares %v, all but s_0 under the floor", c.p, load, r.ShareAtLeast)
			}
		}
	}
}

// SolveProgress reports a fraction that never goes back, stays in [0, 1]
// and ends at 1, and solves exactly what SolveContext solves.
func TestSolveProgress(t *testing.T) {
	testutil.SkipOneGoroutine(t, "many solves")
	p := Params{Placement: bucket.GoLeft, D: 3, Load: 40, Capacity: 0}
	var got []float64
	res, err := SolveProgress(context.Background(), p, func(f float64) { got = append(got, f) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 3 {
		t.Fatalf("%d reports over a solve of %d steps; want several", len(got), res.Steps)
	}
	for i, f := range got {
		if !(f >= 0 && f <= 1) || (i > 0 && f < got[i-1]) {
			t.Fatalf("report %d: %v after %v", i, f, got[max(i-1, 0)])
		}
	}
	if got[len(got)-1] != 1 {
		t.Errorf("last report %v, want 1", got[len(got)-1])
	}
	want, err := SolveContext(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("SolveProgress and SolveContext differ:\n%+v\n%+v", res, want)
	}
}
