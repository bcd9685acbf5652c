package measure

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/hitratio"
	"github.com/twochoice/twochoice/bench/workload"
	"github.com/twochoice/twochoice/store"
)

// Measures selects the measures of a run.
type Measures uint8

const (
	// MeasureHitRatio replays the workload against each cache at each
	// capacity (package hitratio).
	MeasureHitRatio Measures = 1 << iota
	// MeasureThroughput times each cache at each capacity and goroutine
	// count ([Throughput]).
	MeasureThroughput
	// MeasureMemory fills each cache to each capacity ([Memory]).
	MeasureMemory
	// MeasureAll is every measure.
	MeasureAll = MeasureHitRatio | MeasureThroughput | MeasureMemory
)

// Config is a whole comparison: every cache on one workload.
type Config struct {
	Workload Spec
	// Seed seeds the generators (and so the streams of every goroutine);
	// the same seed gives the same requests.
	Seed uint64
	// Caches are peer names (package caches); empty means every peer.
	Caches []string
	// Capacities bound the bounded caches; at least one. Shares of the
	// distinct keys are resolved once the workload is read; capacities
	// that resolve to the same number of entries are measured once.
	Capacities []Capacity
	// Threads are the goroutine counts of the timed runs.
	Threads []int
	// Duration is the timed part of each timed run.
	Duration time.Duration
	// Rounds is how many times each timed run is made, the caches taking
	// turns, to report the median of each figure; 0 means 1.
	Rounds int
	// Measures is what to measure; 0 means MeasureAll.
	Measures Measures
	// SampleEvery is the latency sampling stride (0: 64).
	SampleEvery int
	// Warmup is the number of requests of a generated workload's hit-ratio
	// replay that are not counted; the replay counts as many again. 0
	// means max(2^19, 4 × the largest capacity). A trace or key file is
	// replayed whole, every request counted.
	Warmup int
	// Progress, if set, is told the share of the work done and what runs;
	// it is called from several goroutines.
	Progress func(frac float64, detail string)
}

// Result is the outcome of Run.
type Result struct {
	Config  Config
	Machine Machine
	// Workload names the requests, seed included.
	Workload string
	// DistinctKeys is the number of keys of the workload: all a generator
	// can draw, or those of a file.
	DistinctKeys int
	// Capacities are the capacities measured, in entries, in increasing
	// order.
	Capacities []int
	// ReplayRequests is the length of the hit-ratio replay, of which the
	// first ReplayWarmup were not counted.
	ReplayRequests, ReplayWarmup int64
	// Ceiling is the hit ratio of an unbounded cache on the replay: only
	// the first request for each key misses. No cache does better.
	Ceiling float64
	// TopShare, for a Zipf workload, is for each capacity the share of
	// requests that go to that many most popular keys: the best hit ratio
	// any cache can expect under independent requests.
	TopShare []float64
	// TimerOverhead is the clock overhead subtracted from each latency
	// sample, in nanoseconds.
	TimerOverhead int64
	SampleEvery   int
	Rows          []Row
	// Skipped are the (bounded cache, capacity) pairs that were not
	// measured because the cache refused the capacity (twochoice needs at
	// least one entry per candidate bucket, for one): they have no row.
	Skipped []Skipped
	// Merged are the capacities given in different forms that came to
	// the same number of entries for this workload ("1%" and "10000" of
	// 1M keys): measured once, under that number.
	Merged []Merged
}

// Merged is a number of entries that several of Config.Capacities
// resolved to.
type Merged struct {
	Given   []Capacity
	Entries int
}

// Skipped is a cache that could not be made at a capacity, and why.
type Skipped struct {
	Cache    string
	Capacity int
	Err      error
}

// Run measures every cache of c on its workload: hit ratio first (in
// parallel, one replay per goroutine, as the figures do not depend on
// timing), then memory and the timed runs, one at a time.
func Run(ctx context.Context, c Config) (*Result, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if c.Workload.StringKeys() {
		return run(ctx, c, newStringSource)
	}
	return run(ctx, c, newUintSource)
}

func (c *Config) validate() error {
	if c.Rounds == 0 {
		c.Rounds = 1
	}
	if c.Measures == 0 {
		c.Measures = MeasureAll
	}
	if c.SampleEvery == 0 {
		c.SampleEvery = 64
	}
	switch {
	case len(c.Capacities) == 0:
		return fmt.Errorf("%w: no capacity", ErrConfig)
	case slices.ContainsFunc(c.Capacities, func(x Capacity) bool { return !x.valid() }):
		return fmt.Errorf("%w: a capacity below 1 or above %d entries, or a share outside (0, 100%%]", ErrConfig, MaxCapacity)
	case c.Measures&MeasureThroughput != 0 && len(c.Threads) == 0:
		return fmt.Errorf("%w: no goroutine count", ErrConfig)
	case len(c.Threads) > 0 && slices.Min(c.Threads) < 1:
		return fmt.Errorf("%w: %d goroutines", ErrConfig, slices.Min(c.Threads))
	case c.Measures&MeasureThroughput != 0 && c.Duration <= 0:
		return fmt.Errorf("%w: duration %v", ErrConfig, c.Duration)
	case c.Rounds < 1 || c.SampleEvery < 1 || c.Warmup < 0:
		return fmt.Errorf("%w: %d rounds, sampling 1 in %d", ErrConfig, c.Rounds, c.SampleEvery)
	}
	return nil
}

// DefaultCaches returns the names of the caches of the default comparison:
// every peer but the bounded twochoice peers of rules other than go-left
// (twochoice's default rule), which are variants for study rather than a
// cache to pick.
func DefaultCaches() []string {
	var names []string
	for _, p := range caches.Peers[uint64, Value]() {
		if p.Bounded && strings.HasPrefix(p.Name, "twochoice-") && p.Name != "twochoice-goleft" {
			continue
		}
		names = append(names, p.Name)
	}
	return names
}

// Peers returns the peers named, in the order given, or every peer for
// none. An unknown name is an error wrapping caches.ErrUnknown.
func Peers[K caches.Key](names []string) ([]caches.Peer[K, Value], error) {
	if len(names) == 0 {
		return caches.Peers[K, Value](), nil
	}
	var ps []caches.Peer[K, Value]
	for _, n := range names {
		p, err := caches.Lookup[K, Value](n)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(ps, func(q caches.Peer[K, Value]) bool { return q.Name == n }) {
			return nil, fmt.Errorf("%w: %s named twice", ErrConfig, n)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// key identifies a measurement: a cache, a capacity (0 for an unbounded
// cache's timed runs) and a goroutine count (0 for the untimed measures).
type key struct {
	cache    string
	capacity int
	threads  int
}

// runner holds one comparison while it runs.
type runner[K caches.Key] struct {
	ctx        context.Context
	c          Config
	peers      []caches.Peer[K, Value]
	src        *source[K]
	capacities []int // resolved, increasing
	skip       map[key]bool
	pr         *progress

	// Expected seconds of each piece of work, for the progress bar.
	perReplay, perTimedRun float64
}

func run[K caches.Key](ctx context.Context, c Config, newSource func(Spec, uint64) (*source[K], error)) (*Result, error) {
	peers, err := Peers[K](c.Caches)
	if err != nil {
		return nil, err
	}
	pr := &progress{report: c.Progress}
	pr.show("reading the workload")
	src, err := newSource(c.Workload, c.Seed)
	if err != nil {
		return nil, err
	}
	defer src.arena.free()
	var (
		capacities []int
		given      = map[int][]Capacity{} // by entries, for Merged
	)
	for _, cp := range c.Capacities {
		n := cp.Resolve(src.distinct)
		capacities = append(capacities, n)
		given[n] = append(given[n], cp)
	}
	slices.Sort(capacities)
	capacities = slices.Compact(capacities)
	var merged []Merged
	for _, n := range capacities {
		if len(given[n]) > 1 {
			merged = append(merged, Merged{given[n], n})
		}
	}
	// A capacity past the distinct keys measures nothing an unbounded
	// cache does not, and the memory fill would make twice as many keys
	// (a typo of 10^12 ran out of memory): most likely a mistake.
	if top := slices.Max(capacities); top > src.distinct {
		return nil, fmt.Errorf("%w: capacity %d is above the workload's %d distinct keys", ErrConfig, top, src.distinct)
	} else if top > MaxCapacity {
		return nil, fmt.Errorf("%w: capacity %d (of %d distinct keys) is above the harness's bound of %d entries", ErrConfig, top, src.distinct, MaxCapacity)
	}
	skipped, skip, err := probe(peers, capacities)
	if err != nil {
		return nil, err
	}
	r := &runner[K]{ctx: ctx, c: c, peers: peers, src: src, capacities: capacities, skip: skip, pr: pr}
	res := &Result{Config: c, Machine: ThisMachine(), DistinctKeys: src.distinct, Capacities: capacities, SampleEvery: c.SampleEvery, Skipped: skipped, Merged: merged}

	// Only the memory fills do without the requests.
	if c.Measures&(MeasureHitRatio|MeasureThroughput) != 0 {
		warmup := c.Warmup
		if warmup == 0 {
			warmup = max(minReplayWarmup, 4*slices.Max(capacities))
		}
		if err := src.build(warmup); err != nil {
			return nil, err
		}
		res.ReplayRequests, res.ReplayWarmup = int64(len(src.replay)), src.warmup
		res.Ceiling = ceiling(src.replay, src.warmup)
		if c.Workload.Kind == Zipf {
			for _, cp := range capacities {
				res.TopShare = append(res.TopShare, workload.ZipfTopShare(c.Workload.S, c.Workload.Keys, uint64(cp)))
			}
		}
	}
	res.Workload = src.name
	if res.Workload == "" { // a generator not built: name it from the spec
		res.Workload = fmt.Sprintf("%v,seed=%d", c.Workload, c.Seed)
	}

	jobs := r.replayJobs()
	if c.Measures&MeasureHitRatio != 0 {
		// Belady's optimum at each capacity, the ceiling of the caches
		// that keep every key set (package hitratio).
		seq, err := hitratio.NewSequence(src.replay)
		if err != nil {
			return nil, err
		}
		opt := hitratio.BeladyPeer[K, Value](seq, hitratio.Forced)
		for _, cp := range capacities {
			jobs = append(jobs, hitratio.Job[K, Value]{Peer: opt, Capacity: cp})
		}
	}
	runs := r.timedRuns()
	r.perReplay = float64(len(src.replay)) * 250e-9 / float64(runtime.GOMAXPROCS(0))
	r.perTimedRun = c.Duration.Seconds() + 0.05
	if c.Measures&MeasureHitRatio != 0 {
		pr.total += r.perReplay * float64(len(jobs))
	}
	if c.Measures&MeasureMemory != 0 {
		for range peers {
			for _, cp := range capacities {
				pr.total += memoryWork(cp)
			}
		}
	}
	if c.Measures&MeasureThroughput != 0 {
		pr.total += r.perTimedRun * float64(len(runs)*c.Rounds)
	}

	var hit map[key]float64
	var mem map[key]MemoryResult
	var loads map[key]*store.Report
	var tp map[key][]ThroughputResult
	if c.Measures&MeasureHitRatio != 0 {
		if hit, err = r.hitRatios(jobs); err != nil {
			return nil, err
		}
	}
	if c.Measures&MeasureMemory != 0 {
		if mem, loads, err = r.memory(); err != nil {
			return nil, err
		}
	}
	if c.Measures&MeasureThroughput != 0 {
		res.TimerOverhead = TimerOverhead()
		if tp, err = r.throughput(runs, res.TimerOverhead); err != nil {
			return nil, err
		}
	}
	pr.finish()
	res.Rows = rows(c, capacities, peers, skip, res.Workload, hit, mem, loads, tp)
	return res, nil
}

// probe makes each bounded peer at each capacity once, and returns the
// pairs whose cache refuses the capacity (a twochoice cache of 1 entry has
// fewer entries than candidate buckets), so that one cache's limit does not
// abort the whole comparison. It is an error wrapping ErrConfig only when
// nothing is left to measure.
func probe[K caches.Key](peers []caches.Peer[K, Value], capacities []int) ([]Skipped, map[key]bool, error) {
	var skipped []Skipped
	skip := map[key]bool{}
	left := 0
	for _, p := range peers {
		if !p.Bounded {
			left++
			continue
		}
		for _, cp := range capacities {
			cache, err := p.New(caches.Options{Capacity: cp})
			if err != nil {
				skipped = append(skipped, Skipped{p.Name, cp, err})
				skip[key{p.Name, cp, 0}] = true
				continue
			}
			cache.Close()
			left++
		}
	}
	if left == 0 {
		return nil, nil, fmt.Errorf("%w: no cache takes the capacities asked for (%s at %d: %v)", ErrConfig, skipped[0].Cache, skipped[0].Capacity, skipped[0].Err)
	}
	return skipped, skip, nil
}

// replayJobs returns the hit-ratio replays: each bounded cache at each
// capacity, each unbounded one once.
func (r *runner[K]) replayJobs() []hitratio.Job[K, Value] {
	var jobs []hitratio.Job[K, Value]
	for _, p := range r.peers {
		if !p.Bounded {
			jobs = append(jobs, hitratio.Job[K, Value]{Peer: p})
			continue
		}
		for _, cp := range r.capacities {
			if !r.skip[key{p.Name, cp, 0}] {
				jobs = append(jobs, hitratio.Job[K, Value]{Peer: p, Capacity: cp})
			}
		}
	}
	return jobs
}

// timedRuns returns the timed runs of one round in the order they run:
// by goroutine count, then capacity, then cache, so that the caches take
// turns; the unbounded caches once per goroutine count.
func (r *runner[K]) timedRuns() []key {
	var runs []key
	for _, t := range r.c.Threads {
		for _, cp := range r.capacities {
			for _, p := range r.peers {
				if p.Bounded && !r.skip[key{p.Name, cp, 0}] {
					runs = append(runs, key{p.Name, cp, t})
				}
			}
		}
		for _, p := range r.peers {
			if !p.Bounded {
				runs = append(runs, key{p.Name, 0, t})
			}
		}
	}
	return runs
}

// memoryWork is the expected seconds of a memory fill.
func memoryWork(capacity int) float64 { return float64(2*capacity)*400e-9 + 0.02 }

// hitRatios runs the replays in parallel.
func (r *runner[K]) hitRatios(jobs []hitratio.Job[K, Value]) (map[key]float64, error) {
	open := func() (workload.Workload[K], error) {
		return &cancelable[K]{ctx: r.ctx, w: workload.Replay(r.src.name, r.src.replay)}, nil
	}
	var mu sync.Mutex
	n := 0
	results, err := hitratio.Run(open, jobs, hitratio.Options{Warmup: r.src.warmup, Done: func() {
		mu.Lock()
		n++
		r.pr.add(r.perReplay, fmt.Sprintf("hit ratio %d/%d", n, len(jobs)))
		mu.Unlock()
	}})
	if ctxErr := r.ctx.Err(); ctxErr != nil {
		return nil, ctxErr
	}
	if err != nil {
		return nil, err
	}
	hit := map[key]float64{}
	for _, res := range results {
		hit[key{res.Cache, res.Capacity, 0}] = res.HitRatio()
	}
	return hit, nil
}

// memory fills each cache to each capacity, one at a time, and takes the
// twochoice store's load report.
func (r *runner[K]) memory() (map[key]MemoryResult, map[key]*store.Report, error) {
	mem := map[key]MemoryResult{}
	loads := map[key]*store.Report{}
	keys := r.src.keys(2 * slices.Max(r.capacities))
	for _, cp := range r.capacities {
		for _, p := range r.peers {
			if err := r.ctx.Err(); err != nil {
				return nil, nil, err
			}
			if r.skip[key{p.Name, cp, 0}] {
				continue
			}
			r.pr.show(fmt.Sprintf("memory: %s at %d", p.Name, cp))
			m, cache, err := Memory(p, cp, keys)
			if err != nil {
				return nil, nil, fmt.Errorf("measure: memory of %s at %d: %w", p.Name, cp, err)
			}
			if r := caches.Report(cache); r != nil {
				loads[key{p.Name, cp, 0}] = r
			}
			cache.Close()
			mem[key{p.Name, cp, 0}] = m
			r.pr.add(memoryWork(cp), "")
		}
	}
	return mem, loads, nil
}

// throughput makes the timed runs, round after round.
func (r *runner[K]) throughput(runs []key, overhead int64) (map[key][]ThroughputResult, error) {
	c := r.c
	streams := map[int][]Stream[K]{}
	for _, t := range c.Threads {
		st, err := r.src.streams(t, streamLength(t, c.Duration))
		if err != nil {
			return nil, err
		}
		streams[t] = st
	}
	byName := map[string]caches.Peer[K, Value]{}
	for _, p := range r.peers {
		byName[p.Name] = p
	}
	tp := map[key][]ThroughputResult{}
	for round := range c.Rounds {
		for i, k := range runs {
			r.pr.show(fmt.Sprintf("round %d/%d, run %d/%d: %s", round+1, c.Rounds, i+1, len(runs), k.cache))
			capacity := k.capacity
			if capacity == 0 {
				capacity = slices.Max(r.capacities)
			}
			st := streams[k.threads]
			// 4 requests per entry, shared by the goroutines: on Zipf
			// s = 1 over 1M keys they hold about 1.3 C distinct keys at
			// C = 10% of the keys and 2 C at 1%. A more skewed workload
			// may leave a large cache short of full when timing starts.
			warmup := min(len(st[0].Reqs), max(1<<17, 4*capacity)/len(st))
			t, err := timedRun(r.ctx, byName[k.cache], k.capacity, st, ThroughputOptions{
				Duration: c.Duration, Warmup: warmup, SampleEvery: c.SampleEvery, TimerOverhead: overhead})
			if err != nil {
				return nil, fmt.Errorf("measure: timed run of %s (capacity %d, %d goroutines): %w", k.cache, k.capacity, k.threads, err)
			}
			tp[k] = append(tp[k], t)
			r.pr.add(r.perTimedRun, "")
		}
	}
	return tp, nil
}

// timedRun makes a cache for one timed run and closes it after.
func timedRun[K caches.Key](ctx context.Context, p caches.Peer[K, Value], capacity int, st []Stream[K], o ThroughputOptions) (ThroughputResult, error) {
	cache, err := p.New(caches.Options{Capacity: capacity})
	if err != nil {
		return ThroughputResult{}, err
	}
	defer cache.Close()
	return Throughput(ctx, cache, st, o)
}

// rows lays the measurements out as the rows described at [Row].
func rows[K caches.Key](c Config, capacities []int, peers []caches.Peer[K, Value], skip map[key]bool, name string, hit map[key]float64,
	mem map[key]MemoryResult, loads map[key]*store.Report, tp map[key][]ThroughputResult) []Row {
	threads := c.Threads
	if c.Measures&MeasureThroughput == 0 {
		threads = []int{0}
	}
	var out []Row
	fill := func(r *Row, k key) {
		if h, ok := hit[key{k.cache, k.capacity, 0}]; ok {
			r.HitRatio = f64(h)
		}
		if m, ok := mem[key{k.cache, k.capacity, 0}]; ok && k.capacity > 0 {
			r.BytesPerEntry, r.Entries = f64(m.BytesPerEntry()), m.Entries
		}
		if l, ok := loads[key{k.cache, k.capacity, 0}]; ok && k.capacity > 0 {
			r.Load = l
		}
		// A timed run in which no request completed (a duration too short
		// for the first one) measured nothing: its figures stay nil rather
		// than zeros that read as measured.
		ts := slices.DeleteFunc(slices.Clone(tp[k]), func(t ThroughputResult) bool { return t.Requests == 0 || t.Elapsed <= 0 })
		if len(ts) > 0 {
			med := func(f func(ThroughputResult) float64) *float64 {
				v := make([]float64, len(ts))
				for i, t := range ts {
					v[i] = f(t)
				}
				return f64(median(v))
			}
			r.OpsPerSec = med(ThroughputResult.RequestsPerSec)
			if slices.ContainsFunc(ts, func(t ThroughputResult) bool { return t.Reads > 0 }) {
				r.RunHitRatio = med(ThroughputResult.HitRatio)
			}
			r.GCCPUFraction = med(func(t ThroughputResult) float64 { return t.GCCPUFraction })
			r.AllocsPerOp = med(func(t ThroughputResult) float64 { return t.AllocsPerRequest })
			if ts[0].Get.Samples > 0 {
				r.P50NS = med(func(t ThroughputResult) float64 { return t.Get.P50 })
				r.P99NS = med(func(t ThroughputResult) float64 { return t.Get.P99 })
				r.P999NS = med(func(t ThroughputResult) float64 { return t.Get.P999 })
			}
			if ts[0].Set.Samples > 0 {
				r.SetP50NS = med(func(t ThroughputResult) float64 { return t.Set.P50 })
				r.SetP99NS = med(func(t ThroughputResult) float64 { return t.Set.P99 })
				r.SetP999NS = med(func(t ThroughputResult) float64 { return t.Set.P999 })
			}
		}
	}
	ordered := slices.Clone(peers) // bounded caches first
	slices.SortStableFunc(ordered, func(a, b caches.Peer[K, Value]) int {
		switch {
		case a.Bounded == b.Bounded:
			return 0
		case a.Bounded:
			return -1
		}
		return 1
	})
	belady := func() {
		for _, cp := range capacities {
			if h, ok := hit[key{hitratio.BeladyName, cp, 0}]; ok {
				out = append(out, Row{Cache: hitratio.BeladyName, Workload: name, Capacity: cp, HitRatio: f64(h), Seed: c.Seed})
			}
		}
	}
	for i, p := range ordered {
		if !p.Bounded && (i == 0 || ordered[i-1].Bounded) {
			belady()
		}
		if p.Bounded {
			for _, cp := range capacities {
				if skip[key{p.Name, cp, 0}] {
					continue
				}
				for _, t := range threads {
					r := Row{Cache: p.Name, Workload: name, Capacity: cp, Threads: t, Seed: c.Seed}
					fill(&r, key{p.Name, cp, t})
					out = append(out, r)
				}
			}
			continue
		}
		if c.Measures&(MeasureHitRatio|MeasureThroughput) != 0 {
			for _, t := range threads {
				r := Row{Cache: p.Name, Workload: name, Threads: t, Seed: c.Seed}
				fill(&r, key{p.Name, 0, t})
				out = append(out, r)
			}
		}
		if c.Measures&MeasureMemory != 0 {
			for _, cp := range capacities {
				r := Row{Cache: p.Name, Workload: name, Capacity: cp, Seed: c.Seed}
				fill(&r, key{p.Name, cp, -1})
				out = append(out, r)
			}
		}
	}
	if len(ordered) == 0 || ordered[len(ordered)-1].Bounded {
		belady()
	}
	return out
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// ceiling returns the hit ratio of an unbounded cache on reqs, counting
// from request warmup on.
func ceiling[K caches.Key](reqs []workload.Request[K], warmup int64) float64 {
	seen := make(map[K]struct{})
	var reads, hits int64
	for i, q := range reqs {
		_, hit := seen[q.Key]
		if !hit {
			seen[q.Key] = struct{}{}
		}
		if int64(i) < warmup || q.Op == workload.Write {
			continue
		}
		reads++
		if hit {
			hits++
		}
	}
	if reads == 0 {
		return 0
	}
	return float64(hits) / float64(reads)
}

// cancelable stops a workload when ctx is done, so that an interrupt
// ends the hit-ratio replays.
type cancelable[K caches.Key] struct {
	ctx context.Context
	w   workload.Workload[K]
}

func (c *cancelable[K]) Name() string { return c.w.Name() }

func (c *cancelable[K]) Read(reqs []workload.Request[K]) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Read(reqs)
}

// progress turns expected seconds of work into a fraction done.
type progress struct {
	mu     sync.Mutex
	report func(float64, string)
	total  float64
	done   float64
	detail string
}

// add records sec more seconds of work done, and a new detail unless
// empty.
func (p *progress) add(sec float64, detail string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += sec
	if detail != "" {
		p.detail = detail
	}
	p.emit()
}

// show changes the detail.
func (p *progress) show(detail string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.detail = detail
	p.emit()
}

// finish marks all the work done.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.detail = p.total, "done"
	p.emit()
}

func (p *progress) emit() {
	if p.report == nil {
		return
	}
	f := 0.0
	if p.total > 0 {
		f = min(p.done/p.total, 1)
	}
	p.report(f, p.detail)
}
