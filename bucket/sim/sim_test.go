package sim

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/bucket/fluid"
	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/stats"
)

var long = flag.Bool("long", false, "run the long reproductions (minutes)")

// z is how many standard deviations a share may stray: the chance that a
// correct engine fails one comparison is below 10⁻⁶.
const z = 5

// reference is the fluid limit of rule (with two choices, one for
// OneChoice) at m = load·n: shares of bins with load ≥ k for k = 0, 1, ….
func reference(t *testing.T, rule bucket.Placement, load float64) []float64 {
	t.Helper()
	d := 2
	if rule == bucket.OneChoice {
		d = 1
	}
	res, err := fluid.Solve(fluid.Params{Placement: rule, D: d, Load: load})
	if err != nil {
		t.Fatal(err)
	}
	return res.ShareAtLeast
}

// checkShares compares measured shares from bins·runs bins with the
// expected ones. The tolerance is z binomial standard deviations of the
// share estimate (plus one bin's worth, for shares that round to nothing),
// derived from the run size.
func checkShares(t *testing.T, what string, got, want []float64, bins uint64) {
	t.Helper()
	for k := 1; k < len(want); k++ {
		g := 0.0
		if k < len(got) {
			g = got[k]
		}
		sigma := stats.BinomialSigma(int(bins), want[k]) / float64(bins)
		if !stats.Within(g, want[k], sigma, z) && math.Abs(g-want[k]) > 1/float64(bins) {
			t.Errorf("%s: share ≥ %d = %.6g, want %.6g ± %.2g (%d·σ, %d bins)", what, k, g, want[k], z*sigma, z, bins)
		}
	}
	for k := len(want); k < len(got); k++ {
		if got[k]*float64(bins) > 10 {
			t.Errorf("%s: share ≥ %d = %.3g, where the limit has none", what, k, got[k])
		}
	}
}

func run(t *testing.T, c Config) *Result {
	t.Helper()
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v d=%d %v n=%d runs=%d: %v, max loads %v, %.2f ns/ball", c.Rule, res.Config.D, res.Config.Engine, c.Bins, res.Config.Runs, fmtShares(res.ShareAtLeast()), res.MaxLoadRuns(), res.NsPerBall())
	return res
}

func fmtShares(s []float64) string {
	var b strings.Builder
	for _, x := range s {
		fmt.Fprintf(&b, "%.4g ", x)
	}
	return b.String()
}

var fourRules = []bucket.Placement{bucket.OneChoice, bucket.DChoice, bucket.Halves, bucket.GoLeft}

func TestEnginesMatchFluidLimit(t *testing.T) {
	n, runs := uint64(1<<16), 4
	if *long {
		n, runs = 1<<22, 8
	}
	for _, rule := range fourRules {
		for _, e := range []Engine{Levels, Array} {
			t.Run(fmt.Sprintf("%v/%v", rule, e), func(t *testing.T) {
				res := run(t, Config{Rule: rule, Bins: n, Runs: runs, Seed: 1, Engine: e})
				checkShares(t, rule.String(), res.ShareAtLeast(), reference(t, rule, 1), n*uint64(runs))
			})
		}
	}
}

// m = c·n for load factors other than 1, and d other than 2.
func TestEnginesAtOtherLoads(t *testing.T) {
	n, runs := uint64(1<<15), 4
	for _, tc := range []struct {
		rule bucket.Placement
		d    int
		load float64
	}{
		{bucket.DChoice, 2, 0.5}, {bucket.GoLeft, 2, 2.5}, {bucket.Halves, 3, 1}, {bucket.DChoice, 4, 4},
		{bucket.GoLeft, 4, 1}, {bucket.OneChoice, 1, 7},
	} {
		for _, e := range []Engine{Levels, Array} {
			t.Run(fmt.Sprintf("%v/d=%d/load=%v/%v", tc.rule, tc.d, tc.load, e), func(t *testing.T) {
				m := uint64(tc.load * float64(n))
				res := run(t, Config{Rule: tc.rule, D: tc.d, Bins: n, Balls: m, Runs: runs, Seed: 13, Engine: e})
				fl, err := fluid.Solve(fluid.Params{Placement: tc.rule, D: tc.d, Load: tc.load})
				if err != nil {
					t.Fatal(err)
				}
				checkShares(t, tc.rule.String(), res.ShareAtLeast(), fl.ShareAtLeast, n*uint64(runs))
				if res.Hist.Balls() != m*uint64(runs) {
					t.Fatalf("%d balls, want %d", res.Hist.Balls(), m*uint64(runs))
				}
			})
		}
	}
}

// The two engines simulate the same process: their shares agree within the
// sampling error of the two estimates together.
func TestLevelsAgreesWithArray(t *testing.T) {
	n, runs := uint64(1<<16), 8
	for _, rule := range fourRules {
		for _, load := range []uint64{1, 3} {
			t.Run(fmt.Sprintf("%v/load=%d", rule, load), func(t *testing.T) {
				lv := run(t, Config{Rule: rule, Bins: n, Balls: load * n, Runs: runs, Seed: 2, Engine: Levels})
				ar := run(t, Config{Rule: rule, Bins: n, Balls: load * n, Runs: runs, Seed: 3, Engine: Array})
				a, b := lv.ShareAtLeast(), ar.ShareAtLeast()
				total := n * uint64(runs)
				for k := 1; k < max(len(a), len(b)); k++ {
					x, y := at(a, k), at(b, k)
					p := (x + y) / 2
					sigma := math.Sqrt(2) * stats.BinomialSigma(int(total), p) / float64(total)
					if !stats.Within(x, y, sigma, z) && math.Abs(x-y) > 2/float64(total) {
						t.Errorf("share ≥ %d: levels %.6g, array %.6g, differ by more than %.2g", k, x, y, z*sigma)
					}
				}
				if lv.Hist.Balls() != load*n*uint64(runs) || ar.Hist.Balls() != load*n*uint64(runs) {
					t.Errorf("balls: levels %d, array %d", lv.Hist.Balls(), ar.Hist.Balls())
				}
			})
		}
	}
}

func at(s []float64, k int) float64 {
	if k < len(s) {
		return s[k]
	}
	return 0
}

// Double hashing has the fluid limit of d-choice (Mitzenmacher): on a
// prime and on a power-of-two number of bins.
func TestDoubleHashingMatchesDChoice(t *testing.T) {
	for _, n := range []uint64{1 << 16, 65521} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			res := run(t, Config{Rule: bucket.DoubleHash, Bins: n, Runs: 8, Seed: 4})
			if res.Config.Engine != Array {
				t.Fatalf("engine %v", res.Config.Engine)
			}
			checkShares(t, "double", res.ShareAtLeast(), reference(t, bucket.DChoice, 1), n*8)
		})
	}
}

// Under go-left with two parts, the left part holds 61.12% of the balls.
func TestGoLeftLeftPartShare(t *testing.T) {
	n, runs := uint64(1<<18), 4
	for _, e := range []Engine{Levels, Array} {
		res := run(t, Config{Rule: bucket.GoLeft, Bins: n, Runs: runs, Seed: 5, Engine: e})
		pb := res.Hist.PartBalls()
		m := float64(n) * float64(runs)
		left := float64(pb[0]) / m
		sigma := stats.BinomialSigma(int(m), 0.6112) / m
		if !stats.Within(left, 0.6112, sigma, z) {
			t.Errorf("%v: left part holds %.4f of the balls, want 0.6112 ± %.4f", e, left, z*sigma)
		}
	}
}

// Sequential integer keys hashed by either family behave like uniform
// d-choice candidates.
func TestSequentialKeysMatchDChoice(t *testing.T) {
	n := uint64(1 << 20)
	if testing.Short() {
		n = 1 << 16
	}
	for _, kind := range hashfn.Kinds() {
		for _, rule := range []bucket.Placement{bucket.DChoice, bucket.GoLeft} {
			t.Run(fmt.Sprintf("%v/%v", kind, rule), func(t *testing.T) {
				res := run(t, Config{Rule: rule, Bins: n, Runs: 2, Seed: 6, Keys: &Keys{Kind: SeqKeys, Name: "seq"}, Hash: kind})
				checkShares(t, kind.String(), res.ShareAtLeast(), reference(t, rule, 1), 2*n)
			})
		}
	}
}

func TestRandomAndProductKeys(t *testing.T) {
	n := uint64(1 << 14)
	for _, ks := range []*Keys{{Kind: RandomKeys, Name: "random"}, {Kind: ProductKeys, Name: "product"}, {Kind: FileKeys, Lines: fileLines(int(n)), Name: "lines"}} {
		t.Run(ks.Name, func(t *testing.T) {
			res := run(t, Config{Rule: bucket.DChoice, Bins: n, Runs: 4, Seed: 8, Keys: ks, Hash: hashfn.XXHash})
			checkShares(t, ks.Name, res.ShareAtLeast(), reference(t, bucket.DChoice, 1), 4*n)
		})
	}
}

// Product keys hashed by simple tabulation still have the limit's shares
// on average, but one run's shares stray from them 7.6 to 14.9 times further
// than under xxhash (see ProductKeys): the tolerance here is z standard
// errors of the mean of the runs' own shares, not checkShares' binomial
// error of independent bins, which these runs would fail. A defect in how
// candidates come out of a tabulation hash (candidate words that are not
// independent tabulation functions) moves the mean itself.
func TestProductKeysTabulationMean(t *testing.T) {
	n, runs := uint64(1<<16), 32 // product:4, the whole of {0, …, 3}^8
	for _, rule := range []bucket.Placement{bucket.DChoice, bucket.GoLeft} {
		t.Run(rule.String(), func(t *testing.T) {
			c := Config{Rule: rule, Bins: n, Runs: runs, Seed: 9, Keys: &Keys{Kind: ProductKeys, Name: "product"}, Hash: hashfn.Tabulation}
			shares := make([][]float64, runs)
			for r := range runs {
				h, err := RunOne(context.Background(), c, r)
				if err != nil {
					t.Fatal(err)
				}
				shares[r] = h.ShareAtLeast()
			}
			want := reference(t, rule, 1)
			for k := 1; k <= 3; k++ {
				var mean, ss float64
				for _, s := range shares {
					mean += at(s, k)
				}
				mean /= float64(runs)
				for _, s := range shares {
					ss += (at(s, k) - mean) * (at(s, k) - mean)
				}
				se := math.Sqrt(ss / float64(runs-1) / float64(runs))
				if !stats.Within(mean, want[k], se, z) {
					t.Errorf("share ≥ %d: mean of %d runs %.6g, want %.6g ± %.2g (%d standard errors)", k, runs, mean, want[k], z*se, z)
				}
			}
		})
	}
}

func fileLines(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("user:%d:session", i)
	}
	return s
}

// The product set is what it says: every key's bytes take one of k values,
// the keys are distinct, and k^8 of them are all the combinations.
func TestProductKeys(t *testing.T) {
	const k = 3
	seen := map[uint64]bool{}
	total := uint64(math.Pow(k, 8))
	for i := range total {
		key := ProductKey(k, i)
		for j := range 8 {
			if b := key >> (8 * j) & 0xff; b >= k {
				t.Fatalf("key %d = %#x: byte %d is %d, not below %d", i, key, j, b, k)
			}
		}
		if seen[key] {
			t.Fatalf("key %d = %#x repeats", i, key)
		}
		seen[key] = true
	}
	if uint64(len(seen)) != total {
		t.Fatalf("%d keys, want %d", len(seen), total)
	}
	// The hasher enumerates the same keys, in order.
	f := hashfn.NewXXH(1)
	h := newKeyHasher(&Keys{Kind: ProductKeys, K: k}, f, total, 0)
	got := make([]uint64, 100)
	h.fill(got[:37])
	h.fill(got[37:])
	for i, x := range got {
		if x != f.Uint64(ProductKey(k, uint64(i))) {
			t.Fatalf("hash %d differs", i)
		}
	}
	if kk, err := productK(0, 1<<20); err != nil || kk != 6 {
		t.Fatalf("productK(0, 2^20) = %d, %v; want 6 (6^8 ≥ 2^20 > 5^8)", kk, err)
	}
	if _, err := productK(2, 257); !errors.Is(err, ErrKeys) {
		t.Fatalf("product:2 for 257 balls: %v", err)
	}
}

// The same seed gives the same result whatever the number of workers (each
// reusing its memory from run to run), and RunOne replays one run of it.
func TestDeterministicAcrossWorkers(t *testing.T) {
	for _, c := range []Config{
		{Rule: bucket.Halves, Bins: 5000, Balls: 7000, Runs: 7, Seed: 9, Engine: Levels},
		{Rule: bucket.Halves, Bins: 5000, Balls: 7000, Runs: 7, Seed: 9, Engine: Array},
		{Rule: bucket.GoLeft, Bins: 1 << 12, Runs: 7, Seed: 9, Engine: Levels},
		// Runs in pairs (paired.go) that leave sorted mode at 255.
		{Rule: bucket.Halves, Bins: 1 << 6, Balls: 300<<6 + 1, Runs: 6, Seed: 9, Engine: Levels},
		{Rule: bucket.DChoice, Bins: 1 << 12, Balls: 1 << 14, Runs: 7, Seed: 9, Engine: Levels},
	} {
		e := fmt.Sprintf("%v %v n=%d", c.Rule, c.Engine, c.Bins)
		c.Workers = 1
		one := run(t, c)
		c.Workers = 3
		three := run(t, c)
		if !one.Hist.Equal(three.Hist) || fmt.Sprint(one.MaxLoads) != fmt.Sprint(three.MaxLoads) {
			t.Fatalf("%v: 1 worker %v %v, 3 workers %v %v", e, one.Hist.Parts, one.MaxLoads, three.Hist.Parts, three.MaxLoads)
		}
		sum := bucket.NewHistogram(len(one.Hist.Parts))
		for r := range c.Runs {
			h, err := RunOne(context.Background(), c, r)
			if err != nil {
				t.Fatal(err)
			}
			if h.MaxLoad() != one.MaxLoads[r] {
				t.Fatalf("%v: run %d replays with max load %d, not %d", e, r, h.MaxLoad(), one.MaxLoads[r])
			}
			sum.Merge(h)
		}
		if !sum.Equal(one.Hist) {
			t.Fatalf("%v: replayed runs do not add up to the result", e)
		}
		c.BallByBall = true
		if c.Engine == Levels {
			// Blocks do not run at this size: the same counts either way.
			if bb := run(t, c); !bb.Hist.Equal(one.Hist) {
				t.Fatalf("ball by ball differs where no block runs")
			}
		}
		c.Seed = 10
		other := run(t, c)
		if other.Hist.Equal(one.Hist) {
			t.Fatalf("%v: seeds 9 and 10 gave the same counts", e)
		}
	}
}

// A load past 255 replays the run with wider counters and loses nothing:
// the result equals a run that used wide counters from the start.
func TestArrayWidensCounters(t *testing.T) {
	c, err := Config{Rule: bucket.OneChoice, Bins: 1000, Balls: 250_000, Seed: 11, Engine: Array}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := runArray[uint8](ctx, c, 1, func(uint64) {}); !errors.Is(err, errWrapped) {
		t.Fatalf("bytes at 250 balls per bin: %v, want errWrapped", err)
	}
	wide, err := runArray[uint32](ctx, c, 1, func(uint64) {})
	if err != nil {
		t.Fatal(err)
	}
	mid, err := runArray[uint16](ctx, c, 1, func(uint64) {})
	if err != nil || !mid.Equal(wide) {
		t.Fatalf("16-bit and 32-bit counters differ (%v)", err)
	}
	if wide.MaxLoad() <= 255 || wide.Balls() != c.Balls {
		t.Fatalf("max load %d, %d balls", wide.MaxLoad(), wide.Balls())
	}
	// m = c·n for a load factor that is not an integer.
	res := run(t, Config{Rule: bucket.DChoice, Bins: 3001, Balls: 7777, Seed: 12, Engine: Array})
	if res.Hist.Balls() != 7777 || res.Hist.Buckets() != 3001 {
		t.Fatalf("%d balls in %d bins", res.Hist.Balls(), res.Hist.Buckets())
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{Rule: bucket.DChoice},
		{Rule: bucket.OneChoice, D: 2, Bins: 10},
		{Rule: bucket.DChoice, D: 9, Bins: 10},
		{Rule: bucket.Halves, D: 4, Bins: 3},
		{Rule: bucket.DoubleHash, Bins: 1 << 16, Engine: Levels},
		{Rule: bucket.DoubleHash, Bins: 1000},
		{Rule: bucket.DChoice, Bins: 1 << 32, Engine: Array},
		{Rule: bucket.DChoice, Bins: 1<<40 + 1},
		{Rule: bucket.DChoice, Bins: 100, Keys: &Keys{Kind: SeqKeys}, Engine: Levels},
		{Rule: bucket.DChoice, Bins: 100, Keys: &Keys{Kind: FileKeys, Lines: []string{"a"}}, Balls: 2},
		{Rule: bucket.DChoice, Bins: 100, Runs: -1},
		{Rule: bucket.DChoice, Bins: 1, Balls: 1e13}, // a mean load past MaxMeanLoad
		{Rule: bucket.DChoice, Bins: 100, Runs: MaxRuns + 1},
		{Rule: bucket.DChoice, Bins: 100, Runs: math.MaxInt}, // panicked in make
	} {
		if _, err := Run(context.Background(), c); !errors.Is(err, ErrConfig) && !errors.Is(err, ErrKeys) {
			t.Errorf("%+v: err %v", c, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Config{Rule: bucket.DChoice, Bins: 100}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

// Config.Balls = 0 throws one ball per key of a key file, not n: the
// default its doc gives for FileKeys.
func TestFileKeysBallsDefault(t *testing.T) {
	lines := []string{"a", "b", "c", "d", "e", "f", "g"}
	res, err := Run(context.Background(), Config{Rule: bucket.GoLeft, Bins: 4, Seed: 1,
		Keys: &Keys{Kind: FileKeys, Lines: lines, Name: "seven"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Config.Balls != uint64(len(lines)) || res.Hist.Balls() != uint64(len(lines)) {
		t.Errorf("Balls 0 with %d file keys: config %d, placed %d", len(lines), res.Config.Balls, res.Hist.Balls())
	}
	res, err = Run(context.Background(), Config{Rule: bucket.GoLeft, Bins: 4, Seed: 1, Keys: &Keys{Kind: SeqKeys, Name: "seq"}})
	if err != nil || res.Config.Balls != 4 {
		t.Errorf("Balls 0 with seq keys: %v, %v; want m = n = 4", res.Config.Balls, err)
	}
}

// Past the array engine's 2^31 bins the refusal points to the levels
// engine only for a run the levels engine takes: a double-hashing or
// key-driven run, which the levels engine refuses too, must not be sent
// there.
func TestArrayBoundNamesAnEngineThatCanRun(t *testing.T) {
	for _, tc := range []struct {
		c      Config
		levels bool // whether the message may point to the levels engine
	}{
		{Config{Rule: bucket.DChoice, Bins: 1 << 32, Engine: Array}, true},
		{Config{Rule: bucket.GoLeft, Bins: 1 << 32, Engine: Array}, true},
		{Config{Rule: bucket.DoubleHash, Bins: 1 << 32}, false},
		{Config{Rule: bucket.DChoice, Bins: 1 << 32, Keys: &Keys{Kind: SeqKeys, Name: "seq"}}, false},
	} {
		err := tc.c.Check()
		if !errors.Is(err, ErrConfig) {
			t.Fatalf("%v with %d bins: err %v", tc.c.Rule, tc.c.Bins, err)
		}
		if got := strings.Contains(err.Error(), "levels engine"); got != tc.levels {
			t.Errorf("%v with %d bins (keys %v): %q", tc.c.Rule, tc.c.Bins, tc.c.Keys != nil, err)
		}
		if tc.levels {
			continue
		}
		// The advice, when given, must hold.
		lc := tc.c
		lc.Engine = Levels
		if lc.Check() == nil {
			t.Errorf("%v: the levels engine takes it after all", tc.c.Rule)
		}
	}
}
