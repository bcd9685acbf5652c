package sim

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
)

// MaxLevelsBins is the most bins the levels engine takes.
const MaxLevelsBins = 1 << 40

// MaxMeanLoad is the largest m/n a simulation takes. The levels engine's
// state grows with the loads it sees (a count per level, per part), so a
// mean load of 10^7 takes 680 MB for one bin; at 2^20 it is a few
// megabytes, and a run far beyond it would take days anyway.
const MaxMeanLoad = 1 << 20

// MaxRuns is the most runs a simulation takes. Run keeps each run's
// highest load (Result.MaxLoads, a word per run) and sums the bins as runs
// finish, so memory grows by 8 bytes a run: 128 MiB at MaxRuns. A run of a
// few bins takes about a microsecond and one of 2^12 bins some 15, so
// MaxRuns runs take from tens of seconds to a few minutes.
const MaxRuns = 1 << 24

// ErrConfig is returned for a simulation that cannot be run as asked.
var ErrConfig = errors.New("sim: bad config")

// ErrMemory is returned when the array engine cannot have the memory for
// its bins (a byte or more per bin: 2 GiB at 2^31 bins).
var ErrMemory = errors.New("sim: out of memory")

// Config describes a simulation: Runs independent runs of Balls balls into
// Bins bins under one rule. Its zero value is not runnable (Bins is 0); the
// other zero fields mean the defaults given with them.
type Config struct {
	Rule bucket.Placement
	// D is the number of choices: 0 means 2 (1 under OneChoice).
	D int
	// Bins is n, from the number of parts up to MaxLevelsBins (levels) or
	// MaxArrayBins (array).
	Bins uint64
	// Balls is m; 0 means m = n, or with FileKeys one ball per key of the
	// file. Any m works, m = c·n for any c > 0, up to a mean load of
	// MaxMeanLoad (2^20 balls per bin; m/n rounded down).
	Balls uint64
	// Runs is the number of independent runs, up to MaxRuns; 0 means 1.
	Runs int
	// Seed picks every random choice of every run: run r draws from a
	// stream seeded with RunSeed(Seed, r).
	Seed uint64
	// Engine chooses the engine; Auto picks one (see Engine).
	Engine Engine
	// BallByBall keeps the levels engine out of block mode (blocks.go):
	// every ball drawn and placed singly, in integer arithmetic only, at a
	// few nanoseconds per ball instead of a fraction of one on large n.
	BallByBall bool
	// Keys, when set, makes the runs key-driven: each ball is a key hashed
	// by the Hash family (seeded per run) into the rule's candidates with
	// bucket.Placement.Generator. Nil means uniform random candidates.
	Keys *Keys
	Hash hashfn.Kind
	// Workers is the number of runs in flight at once; 0 means GOMAXPROCS.
	// It changes the speed, never the results.
	Workers int
	// Progress, if set, is called now and then with the work done so far,
	// from one goroutine at a time.
	Progress func(Progress)
}

// Progress is how far a simulation has got.
type Progress struct {
	Runs, RunsDone     int
	Balls, BallsPlaced uint64 // over all runs
}

// resolve validates c and fills in its defaults and its engine.
func (c Config) resolve() (Config, error) {
	if !c.Rule.Valid() {
		return c, fmt.Errorf("%w: %w", ErrConfig, c.Rule.CheckChoices(1))
	}
	if c.D == 0 {
		c.D = 2
		if c.Rule == bucket.OneChoice {
			c.D = 1
		}
	}
	if err := c.Rule.CheckChoices(c.D); err != nil {
		return c, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if c.Bins < uint64(c.Rule.Parts(c.D)) || c.Bins < 1 {
		return c, fmt.Errorf("%w: %d bins cannot make %d parts", ErrConfig, c.Bins, c.Rule.Parts(c.D))
	}
	if c.Balls == 0 {
		c.Balls = c.Bins
		if c.Keys != nil && c.Keys.Kind == FileKeys {
			c.Balls = uint64(len(c.Keys.Lines))
		}
	}
	if c.Balls/c.Bins > MaxMeanLoad {
		return c, fmt.Errorf("%w: %d balls into %d bins, a mean load above %d", ErrConfig, c.Balls, c.Bins, MaxMeanLoad)
	}
	if c.Runs == 0 {
		c.Runs = 1
	}
	if c.Runs < 0 || c.Runs > MaxRuns {
		return c, fmt.Errorf("%w: %d runs (want 1 to %d)", ErrConfig, c.Runs, MaxRuns)
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.Engine == Auto {
		c.Engine = Array
		if c.Keys == nil && levelsRule(c.Rule) && c.Bins <= MaxLevelsBins {
			c.Engine = Levels
		}
	}
	switch c.Engine {
	case Levels:
		if c.Keys != nil {
			return c, fmt.Errorf("%w: key-driven runs need the array engine", ErrConfig)
		}
		if !levelsRule(c.Rule) {
			return c, fmt.Errorf("%w: the levels engine cannot run %v (its candidates are not uniform per part); use the array engine", ErrConfig, c.Rule)
		}
		if c.Bins > MaxLevelsBins {
			return c, fmt.Errorf("%w: %d bins, over the levels engine's 2^40", ErrConfig, c.Bins)
		}
	case Array:
		if c.Bins > MaxArrayBins {
			// Point to the levels engine only for a run it can take.
			if c.Keys == nil && levelsRule(c.Rule) {
				return c, fmt.Errorf("%w: %d bins, over the array engine's 2^31 (the levels engine goes to 2^40)", ErrConfig, c.Bins)
			}
			return c, fmt.Errorf("%w: %d bins, over the array engine's 2^31, the only engine that runs %s", ErrConfig, c.Bins, arrayOnly(c))
		}
		if _, err := c.Rule.Generator(c.Bins, c.D); err != nil {
			return c, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		if c.Keys != nil {
			if err := c.Keys.check(c.Balls); err != nil {
				return c, err
			}
			if !c.Hash.Valid() {
				return c, fmt.Errorf("%w: hash family %v", ErrConfig, c.Hash)
			}
		}
	default:
		return c, fmt.Errorf("%w: engine %v", ErrConfig, c.Engine)
	}
	return c, nil
}

// arrayOnly says why c needs the array engine: key-driven runs, or a rule
// whose candidates are not uniform per part.
func arrayOnly(c Config) string {
	if c.Keys != nil {
		return "key-driven runs"
	}
	return c.Rule.String()
}

// Check returns the error Run would return for c before its first run, or
// nil: a caller with several simulations to run checks them all first.
func (c Config) Check() error {
	_, err := c.resolve()
	return err
}

// Result is what a simulation measured.
type Result struct {
	// Config is the configuration run, with its defaults and engine filled.
	Config Config
	// Hist counts the bins of all runs by load, per part. Every run has the
	// same n, so its shares are the shares averaged over the runs.
	Hist *bucket.Histogram
	// MaxLoads is the highest load of each run, by run index.
	MaxLoads []int
	// Wall is the time the whole simulation took; Busy the time spent in
	// runs, summed over the runs (about Wall × Workers when all are busy).
	Wall, Busy time.Duration
}

// ShareAtLeast returns s[k], the fraction of bins with load ≥ k averaged
// over the runs, for k up to the highest load seen.
func (r *Result) ShareAtLeast() []float64 { return r.Hist.ShareAtLeast() }

// PartShareAtLeast returns ShareAtLeast for each part on its own.
func (r *Result) PartShareAtLeast() [][]float64 { return r.Hist.PartShareAtLeast() }

// MaxLoadRuns returns how many runs had each highest load.
func (r *Result) MaxLoadRuns() map[int]int {
	m := map[int]int{}
	for _, l := range r.MaxLoads {
		m[l]++
	}
	return m
}

// NsPerBall is the time one core spent per ball.
func (r *Result) NsPerBall() float64 {
	return float64(r.Busy.Nanoseconds()) / float64(r.Config.Balls) / float64(len(r.MaxLoads))
}

// progressChunk is the number of balls a run places between checks of the
// context and reports of progress.
const progressChunk = 1 << 22

// Run runs the simulation, the runs in parallel on Workers goroutines. The
// result depends on the config alone, not on Workers or scheduling. It
// stops early with ctx's error when ctx is done.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	c, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	res := &Result{Config: c, MaxLoads: make([]int, c.Runs)}
	// Each worker sums the bins of its runs as they finish: keeping every
	// run's histogram until the end would take a few hundred bytes a run (4 GB
	// for 3·10^7 runs of a few bins). The sums are of integers, so the
	// total does not depend on which worker ran which run.
	workers := min(c.Workers, c.Runs)
	sums := make([]*bucket.Histogram, workers)
	var (
		next, done atomic.Int64
		placed     atomic.Uint64
		busy       atomic.Int64
		mu         sync.Mutex // serializes Progress calls
		wg         sync.WaitGroup
		firstErr   error
		errOnce    sync.Once
	)
	report := func() {
		if c.Progress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		c.Progress(Progress{Runs: c.Runs, RunsDone: int(done.Load()), Balls: c.Balls * uint64(c.Runs), BallsPlaced: placed.Load()})
	}
	// Runs go two at a time where that pays (paired.go), and while there
	// are two for every worker, so that pairing never leaves a core idle.
	step := 1
	if c.Runs >= 2*workers && pairPays(c) {
		step = 2
	}
	start := time.Now()
	for i := range workers {
		sum := bucket.NewHistogram(c.Rule.Parts(c.D))
		sums[i] = sum
		wg.Go(func() {
			var w runner
			progress := func(balls uint64) {
				placed.Add(balls)
				report()
			}
			for {
				r := int(next.Add(int64(step)) - int64(step))
				if r >= c.Runs || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				n := 1
				var err error
				if step == 2 && r+1 < c.Runs {
					n = 2
					res.MaxLoads[r], res.MaxLoads[r+1], err = w.runPair(ctx, c, r, sum, progress)
				} else {
					res.MaxLoads[r], err = w.run(ctx, c, r, sum, progress)
				}
				busy.Add(int64(time.Since(t0)))
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				done.Add(int64(n))
				report()
			}
		})
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	if firstErr != nil {
		return nil, firstErr
	}
	res.Wall, res.Busy = time.Since(start), time.Duration(busy.Load())
	res.Hist = bucket.NewHistogram(c.Rule.Parts(c.D))
	for _, sum := range sums {
		res.Hist.Merge(sum)
	}
	return res, nil
}

// RunOne replays run r of the simulation cfg on its own and returns its
// bins counted by load: the same counts as run r of Run(cfg).
func RunOne(ctx context.Context, cfg Config, r int) (*bucket.Histogram, error) {
	c, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	if r < 0 || r >= c.Runs {
		return nil, fmt.Errorf("%w: run %d of %d", ErrConfig, r, c.Runs)
	}
	var w runner
	h := bucket.NewHistogram(c.Rule.Parts(c.D))
	if _, err := w.run(ctx, c, r, h, func(uint64) {}); err != nil {
		return nil, err
	}
	return h, nil
}

// A runner runs runs one after another, keeping what a run allocates for
// the next: at 2^12 bins a run takes about ten microseconds, so a fresh
// chain (its batch buffers, counters and sorted arrays) would cost a good
// part of it. Runs share no state but this memory, which each run resets.
type runner struct {
	chain *levelsChain
	pair  [2]*levelsChain // runPair's
}

// run runs run r of the resolved config c, calling placed with the number
// of balls placed every progressChunk balls; it adds the run's bins to sum
// and returns its highest load.
func (w *runner) run(ctx context.Context, c Config, r int, sum *bucket.Histogram, placed func(uint64)) (maxLoad int, err error) {
	seed := RunSeed(c.Seed, r)
	if c.Engine == Levels {
		g := newStream(seed)
		ch := w.chain
		if ch == nil || !ch.reset(c.Rule, c.D, c.Bins) {
			ch = newLevelsChain(c.Rule, c.D, c.Bins)
			w.chain = ch
		}
		ch.noBlocks = c.BallByBall
		for m := c.Balls; m > 0; {
			b := min(m, progressChunk)
			ch.throw(b, &g)
			m -= b
			placed(b)
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		return ch.addTo(sum), nil
	}
	// A counter that wraps replays the run, from the same seed, with wider
	// counters: the stream does not depend on the loads, so the replay is
	// the same run.
	for width := counterBits(c.Bins, c.Balls); ; width *= 2 {
		var h *bucket.Histogram
		var err error
		switch width {
		case 8:
			h, err = runArray[uint8](ctx, c, seed, placed)
		case 16:
			h, err = runArray[uint16](ctx, c, seed, placed)
		default:
			h, err = runArray[uint32](ctx, c, seed, placed)
			if errors.Is(err, errWrapped) {
				return 0, fmt.Errorf("%w: a bin passed 2^32-1 balls", ErrConfig)
			}
		}
		switch {
		case err == nil:
			sum.Merge(h)
			return h.MaxLoad(), nil
		case !errors.Is(err, errWrapped):
			return 0, err
		}
	}
}

func runArray[T counter](ctx context.Context, c Config, seed uint64, placed func(uint64)) (*bucket.Histogram, error) {
	var kh *keyHasher
	if c.Keys != nil {
		f, err := hashfn.New(c.Hash, seed)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		// The key stream (RandomKeys) is its own, apart from the coins.
		kh = newKeyHasher(c.Keys, f, c.Balls, hashfn.Mix(seed^0x6b657973))
	}
	src, err := newCandidates(c.Rule, c.D, c.Bins, kh)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	bins, free, err := allocBins[T](c.Bins)
	if err != nil {
		return nil, err
	}
	defer free()
	a := newArrayRun(bins, c.Rule, c.D, src)
	g := newStream(seed)
	var wrapped error
	for m := c.Balls; m > 0; {
		b := min(m, progressChunk)
		if err := a.throw(b, &g); err != nil {
			wrapped = err
		}
		m -= b
		placed(b)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if wrapped != nil {
		return nil, wrapped
	}
	return a.histogram(), nil
}
