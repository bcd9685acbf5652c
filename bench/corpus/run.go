package corpus

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/hitratio"
	"github.com/twochoice/twochoice/bench/measure"
	"github.com/twochoice/twochoice/bench/workload"
	"github.com/twochoice/twochoice/store"
)

// Twochoice is the display name of the bounded twochoice store under its
// default rule, the peer TwochoicePeer: the cache a corpus run measures
// against the others.
const Twochoice = "twochoice"

// TwochoicePeer is the peer Twochoice stands for.
const TwochoicePeer = "twochoice-goleft"

// DefaultCaches are the caches of a corpus run: twochoice and every other
// bounded peer but twochoice's other placement rules.
func DefaultCaches() []string {
	return []string{TwochoicePeer, "otter", "ristretto", "lru", "arc", "2q"}
}

// DefaultCapacities are the capacities of a corpus run: 1%, 5%, 10% and
// 25% of each workload's distinct keys.
func DefaultCapacities() []measure.Capacity {
	return []measure.Capacity{{Share: 0.01}, {Share: 0.05}, {Share: 0.10}, {Share: 0.25}}
}

// Config is a corpus run.
type Config struct {
	Items []Item
	// Capacities are the capacities of every workload, most usefully
	// shares of its distinct keys; at least one.
	Capacities []measure.Capacity
	// Caches are the bounded peers to replay, by name (package caches;
	// "twochoice" names TwochoicePeer); nil means DefaultCaches. They must
	// include twochoice and one other cache.
	Caches []string
	// Keys, Requests and Seed shape the Zipf workloads: Keys keys,
	// Requests counted requests after as many uncounted ones, drawn from
	// Seed.
	Keys     uint64
	Requests int
	Seed     uint64
	// Rounds is how many times each cache whose figures vary from run to
	// run (caches.Peer.Random: otter, ristretto) is replayed on each row,
	// to report the median; < 1 means 1.
	Rounds int
	// Seeds is how many hash seeds each seeded cache (caches.Peer.Seeded:
	// twochoice's) is replayed under on each row, seeds 1 to Seeds, to
	// report the median; < 1 means 1, the harness's fixed seed alone.
	Seeds int
	// Ranking, if not empty, pins twochoice's eviction ranking to one of
	// store.Rankings() (store.CacheOptions.Ranking), to see what that
	// ranking does on every row where the adaptive policy would choose.
	Ranking string
	// Rankings replays twochoice once more per ranking of
	// store.Rankings(), pinned to it (under the same seeds), beside its
	// adaptive replays: each row's Pinned then says what the adaptive
	// policy costs or gains against the ranking that does best on that
	// row, and Summary.Pinned sums it up. Not with Ranking.
	Rankings bool
	// Timeline, if above 0, splits each row's counted reads into that
	// many windows of equal length (the last may be shorter) and keeps
	// every cache's hit ratio in each (Row.Timeline, Row.PinnedTimeline):
	// how the adaptive policy moves along a workload, beside the peers
	// and the rankings pinned. At most MaxTimeline.
	Timeline int
	// Parallel is the most replays at once; < 1 means GOMAXPROCS.
	Parallel int
	// Progress, if set, is told the share of the work done and what runs;
	// it is called from several goroutines, one call at a time.
	Progress func(frac float64, detail string)
}

// Result is the outcome of Run.
type Result struct {
	// Caches are the caches of the hit-ratio columns, in order: twochoice
	// first; Peers those of them the best peer is taken from (not
	// twochoice's variants under other rules).
	Caches []string `json:"caches"`
	Peers  []string `json:"peers"`
	Rows   []Row    `json:"rows"`
	// Summary sums up the rows (see the package documentation).
	Summary Summary `json:"summary"`
	// Problems are the broken bounds of every row (see Checks in the
	// package documentation); a correct replay has none.
	Problems []string `json:"problems,omitempty"`
	// Workloads is the number of workloads, Replays the number of
	// replays made, Rounds those of each cache whose figures vary, and
	// Seeds those of each seeded cache.
	Workloads int `json:"workloads"`
	Replays   int `json:"replays"`
	Rounds    int `json:"rounds"`
	Seeds     int `json:"seeds"`
	// Ranking is Config.Ranking: the ranking twochoice was pinned to, if
	// any.
	Ranking string `json:"ranking,omitempty"`
	// Rankings are the rankings twochoice was also replayed pinned to
	// (Config.Rankings), in store.Rankings()'s order.
	Rankings []string `json:"rankings,omitempty"`
	// Timeline is Config.Timeline: the windows of each row's timeline.
	Timeline int `json:"timeline,omitempty"`
	// Wall is the run's wall time, in seconds in JSON.
	Wall        time.Duration   `json:"-"`
	WallSeconds float64         `json:"wall_seconds"`
	Machine     measure.Machine `json:"machine"`
	// ZipfKeys, ZipfRequests and Seed are those of the generated (Zipf
	// and aging) workloads, if any.
	ZipfKeys     uint64 `json:"zipf_keys,omitempty"`
	ZipfRequests int    `json:"zipf_requests,omitempty"`
	Seed         uint64 `json:"seed"`
}

// Row is one workload at one capacity.
type Row struct {
	Workload string `json:"workload"`
	// Capacity is the capacity as given ("1%"), Entries as resolved.
	Capacity string `json:"capacity"`
	Entries  int    `json:"entries"`
	// DistinctKeys are the keys the capacity is a share of; Reads the
	// requests counted, after Warmup requests replayed uncounted (the
	// generated workloads').
	DistinctKeys int   `json:"distinct_keys"`
	Reads        int64 `json:"reads"`
	Warmup       int64 `json:"warmup,omitempty"`
	// HitRatio is each cache's hit ratio, by the names of Result.Caches,
	// and belady's and belady-bypass's. A cache that refused the capacity
	// (twochoice needs an entry per candidate bucket) has none. A cache
	// replayed several times (Config.Rounds) has the median of its
	// replays (a seeded one, the median of its seeds), and its lowest and
	// highest in Range. Policy comes from twochoice's median replay.
	HitRatio map[string]float64    `json:"hit_ratio"`
	Range    map[string][2]float64 `json:"hit_ratio_range,omitempty"`
	// BestPeer is the peer with the highest hit ratio (the first of the
	// peers in Result.Peers' order on a tie), Best its hit ratio.
	BestPeer string  `json:"best_peer,omitempty"`
	Best     float64 `json:"best_peer_hit_ratio"`
	// Margin is 100 × (twochoice − Best), in points; nil when twochoice
	// or every peer refused the capacity.
	Margin *float64 `json:"margin_points"`
	// Policy is the state of twochoice's eviction policy at the end of
	// its replay: the setting it ended on and the changes that led there
	// (store.PolicyState); nil when twochoice refused the capacity.
	Policy *store.PolicyState `json:"policy,omitempty"`
	// Pinned is twochoice's hit ratio pinned to each ranking of
	// Result.Rankings, by its name: the median over the seeds, as
	// HitRatio's is. Nil without Config.Rankings or when twochoice
	// refused the capacity.
	Pinned map[string]float64 `json:"pinned,omitempty"`
	// Timeline is each cache's hit ratio in each window of the row's
	// counted reads (Config.Timeline), by the names of HitRatio, from the
	// replay whose hit ratio HitRatio reports; PinnedTimeline the same
	// for the rankings of Pinned. Window is the reads of each window but
	// the last. Nil without Config.Timeline.
	Timeline       map[string][]float64 `json:"timeline,omitempty"`
	PinnedTimeline map[string][]float64 `json:"pinned_timeline,omitempty"`
	Window         int64                `json:"window,omitempty"`
	// Problems are the row's broken bounds.
	Problems []string `json:"problems,omitempty"`
}

// Belady returns the row's Belady optimum (forced insertion).
func (r Row) Belady() float64 { return r.HitRatio[hitratio.BeladyName] }

// costs are rough nanoseconds per request of each cache's replay with Sync
// (P12 at 1% and 25% of its blocks, on a 2-core AMD EPYC): they order the
// replays, longest first, and pace the progress bar, nothing else.
var costs = map[string]float64{
	"ristretto": 2000, "otter": 500, "arc": 400, "2q": 350, "lru": 250,
	hitratio.BeladyName: 30, hitratio.BeladyBypassName: 30,
}

// costOf is a cache's cost per request; 250 ns for those not listed
// (twochoice's rules).
func costOf(name string) float64 { return cmp.Or(costs[name], 250) }

// task is one replay.
type task struct {
	w        *loaded
	peer     caches.Peer[uint64, struct{}]
	capacity int
	seed     uint64 // a seeded peer's hash seed: 1, 2, …
	ranking  string // the ranking twochoice is pinned to, if any
	pinned   bool   // one of Config.Rankings' extra replays
	cost     float64
	res      hitratio.Result
	err      error
}

// Run replays every workload of c at every capacity against every cache
// and Belady's optimum (both variants), checks the bounds, and sums up.
// Bad configurations are errors wrapping ErrConfig, or caches.ErrUnknown
// for a cache's name; a workload that cannot be read is the workload
// package's error. With problems, Run returns the whole result and an
// error wrapping ErrCheck that lists them.
func Run(ctx context.Context, c Config) (*Result, error) {
	start := time.Now()
	peers, err := peersOf(c.Caches)
	if err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	res := &Result{Machine: measure.ThisMachine(), Seed: c.Seed, Workloads: len(c.Items), Rounds: max(c.Rounds, 1), Seeds: max(c.Seeds, 1), Ranking: c.Ranking, Timeline: c.Timeline}
	if c.Rankings {
		res.Rankings = store.Rankings()
	}
	for _, p := range peers {
		res.Caches = append(res.Caches, display(p.Name))
		if !strings.HasPrefix(p.Name, "twochoice") {
			res.Peers = append(res.Peers, p.Name)
		}
	}
	if slices.ContainsFunc(c.Items, Item.Generated) {
		res.ZipfKeys, res.ZipfRequests = c.Keys, c.Requests
	}
	parallel := c.Parallel
	if parallel < 1 {
		parallel = runtime.GOMAXPROCS(0)
	}
	var mu sync.Mutex // orders the calls to c.Progress
	progress := func(f float64, detail string) {
		if c.Progress != nil {
			mu.Lock()
			c.Progress(f, detail)
			mu.Unlock()
		}
	}

	progress(0, fmt.Sprintf("reading %d workloads", len(c.Items)))
	ws := make([]*loaded, len(c.Items))
	if err := each(ctx, len(c.Items), parallel, func(i int) (err error) {
		ws[i], err = load(ctx, c.Items[i], c.Keys, c.Requests, c.Seed)
		if err != nil {
			return fmt.Errorf("corpus: %s: %w", c.Items[i].Name, err)
		}
		return nil
	}); err != nil {
		return nil, err
	}

	// The entries of each row, and the replays: each cache once per
	// workload and number of entries (two capacities may come to the
	// same), Belady's optimum in both variants.
	opt := map[*loaded][2]caches.Peer[uint64, struct{}]{}
	var tasks []*task
	type at struct {
		w       *loaded
		entries int
	}
	byEntries := map[at][]*task{}
	for _, w := range ws {
		opt[w] = [2]caches.Peer[uint64, struct{}]{
			hitratio.BeladyPeer[uint64, struct{}](w.seq, hitratio.Forced),
			hitratio.BeladyPeer[uint64, struct{}](w.seq, hitratio.Bypass),
		}
		for _, cp := range c.Capacities {
			n := cp.Resolve(w.distinct)
			if n > w.distinct || n > measure.MaxCapacity {
				return nil, fmt.Errorf("%w: capacity %v of %s is %d entries, above its %d distinct keys or the harness's bound of %d",
					ErrConfig, cp, w.item.Name, n, w.distinct, measure.MaxCapacity)
			}
			if _, ok := byEntries[at{w, n}]; ok {
				continue
			}
			for _, p := range append(slices.Clone(peers), opt[w][0], opt[w][1]) {
				// A cache that refuses the capacity (twochoice needs an
				// entry per candidate bucket) has no figure in the row.
				if cache, err := p.New(caches.Options{Capacity: n}); err != nil {
					continue
				} else {
					cache.Close()
				}
				rounds := 1
				switch {
				case p.Random:
					rounds = res.Rounds
				case p.Seeded:
					rounds = res.Seeds
				}
				// The adaptive replays (or those pinned to c.Ranking),
				// then those pinned to each ranking of res.Rankings.
				pins := []string{c.Ranking}
				if p.Name == TwochoicePeer {
					pins = append(pins, res.Rankings...)
				}
				for x, ranking := range pins {
					for r := range rounds {
						t := &task{w: w, peer: p, capacity: n, cost: float64(len(w.keys)) * costOf(p.Name), pinned: x > 0}
						if p.Seeded { // twochoice's caches
							t.seed, t.ranking = uint64(r)+1, ranking
						}
						byEntries[at{w, n}] = append(byEntries[at{w, n}], t)
						tasks = append(tasks, t)
					}
				}
			}
		}
	}
	res.Replays = len(tasks)

	order := slices.Clone(tasks)
	slices.SortStableFunc(order, func(a, b *task) int { return cmp.Compare(b.cost, a.cost) })
	var total, done float64
	for _, t := range order {
		total += t.cost
	}
	var finished atomic.Int64
	err = each(ctx, len(order), parallel, func(i int) error {
		t := order[i]
		open := func() (workload.Workload[uint64], error) {
			return &cancelable{ctx: ctx, w: workload.ReplayReads(t.w.item.Name, t.w.keys)}, nil
		}
		job := hitratio.Job[uint64, struct{}]{Peer: t.peer, Capacity: t.capacity, Seed: t.seed, Ranking: t.ranking, Window: t.w.window(c.Timeline)}
		t.res, t.err = hitratio.RunOne(open, job, t.w.warmup)
		if t.err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		n := finished.Add(1)
		mu.Lock()
		done += t.cost
		f := done / total
		mu.Unlock()
		progress(f, fmt.Sprintf("replay %d/%d: %s at %d, %s", n, len(order), t.w.item.Name, t.capacity, t.name()))
		return nil
	})
	if err != nil {
		return nil, err
	}

	for _, w := range ws {
		for _, cp := range c.Capacities {
			n := cp.Resolve(w.distinct)
			row, err := makeRow(w, cp, n, byEntries[at{w, n}], res.Peers)
			if c.Timeline > 0 {
				row.Window = w.window(c.Timeline)
			}
			if err != nil {
				return nil, err
			}
			res.Rows = append(res.Rows, row)
			for _, p := range row.Problems {
				res.Problems = append(res.Problems, fmt.Sprintf("%s at %v: %s", row.Workload, cp, p))
			}
		}
	}
	res.Summary = Summarize(res.Rows)
	res.Wall = time.Since(start)
	res.WallSeconds = res.Wall.Seconds()
	progress(1, "done")
	if len(res.Problems) > 0 {
		return res, fmt.Errorf("%w: %s", ErrCheck, strings.Join(res.Problems, "; "))
	}
	return res, nil
}

// MaxTimeline is the most windows Config.Timeline splits a row into.
const MaxTimeline = 100

// DefaultRequests are the requests counted of a generated workload when
// the caller names no other count (bench --corpus's --requests).
const DefaultRequests = 2_000_000

// Check returns the error Run would return for c before replaying
// anything, or nil: a caller that runs other work first (the report runs
// tens of minutes of it) can refuse a bad configuration at once.
func (c Config) Check() error { return c.validate() }

// validate checks c, and fills in the defaults.
func (c *Config) validate() error {
	if len(c.Capacities) == 0 {
		c.Capacities = DefaultCapacities()
	}
	switch {
	case len(c.Items) == 0:
		return fmt.Errorf("%w: no workload", ErrConfig)
	case c.Ranking != "" && !slices.Contains(store.Rankings(), c.Ranking):
		return fmt.Errorf("%w: ranking %q, want one of %s", ErrConfig, c.Ranking, strings.Join(store.Rankings(), ", "))
	case c.Ranking != "" && c.Rankings:
		return fmt.Errorf("%w: ranking %q pins every replay, and Rankings replays every ranking beside the adaptive policy: one or the other", ErrConfig, c.Ranking)
	case c.Timeline < 0 || c.Timeline > MaxTimeline:
		return fmt.Errorf("%w: a timeline of %d windows, want 0 to %d", ErrConfig, c.Timeline, MaxTimeline)
	case slices.ContainsFunc(c.Capacities, func(x measure.Capacity) bool {
		return !(x.Share == 0 && x.Entries >= 1 && x.Entries <= measure.MaxCapacity || x.Share > 0 && x.Share <= 1)
	}):
		return fmt.Errorf("%w: a capacity below 1 or above %d entries, or a share outside (0, 100%%]", ErrConfig, measure.MaxCapacity)
	}
	if slices.ContainsFunc(c.Items, Item.Generated) {
		switch {
		case c.Keys < 1 || c.Keys > workload.MaxZipfKeys:
			return fmt.Errorf("%w: zipf or aging over %d keys, want 1 to 2^53", ErrConfig, c.Keys)
		case c.Requests < 1 || 2*c.Requests > maxRequests:
			return fmt.Errorf("%w: zipf or aging with %d requests, want 1 to %d (they and as many more are held in memory)", ErrConfig, c.Requests, maxRequests/2)
		}
	}
	return nil
}

// peersOf returns the caches named (DefaultCaches for none), twochoice
// first: bounded peers only, twochoice among them and one other.
func peersOf(names []string) ([]caches.Peer[uint64, struct{}], error) {
	if len(names) == 0 {
		names = DefaultCaches()
	}
	var ps []caches.Peer[uint64, struct{}]
	for _, n := range names {
		if n == Twochoice {
			n = TwochoicePeer
		}
		p, err := caches.Lookup[uint64, struct{}](n)
		if err != nil {
			return nil, err
		}
		switch {
		case !p.Bounded:
			return nil, fmt.Errorf("%w: %s is unbounded: a corpus compares caches of a capacity", ErrConfig, n)
		case slices.ContainsFunc(ps, func(q caches.Peer[uint64, struct{}]) bool { return q.Name == n }):
			return nil, fmt.Errorf("%w: %s named twice", ErrConfig, display(n))
		}
		ps = append(ps, p)
	}
	i := slices.IndexFunc(ps, func(p caches.Peer[uint64, struct{}]) bool { return p.Name == TwochoicePeer })
	if i < 0 {
		return nil, fmt.Errorf("%w: the caches must include %s (the bounded %s store), which the corpus measures", ErrConfig, Twochoice, TwochoicePeer)
	}
	ps = append(append([]caches.Peer[uint64, struct{}]{ps[i]}, ps[:i]...), ps[i+1:]...)
	if !slices.ContainsFunc(ps, func(p caches.Peer[uint64, struct{}]) bool { return !strings.HasPrefix(p.Name, "twochoice") }) {
		return nil, fmt.Errorf("%w: no cache to compare %s with: name one besides twochoice's rules", ErrConfig, Twochoice)
	}
	return ps, nil
}

// display is a cache's column name: Twochoice for TwochoicePeer.
func display(name string) string {
	if name == TwochoicePeer {
		return Twochoice
	}
	return name
}

// makeRow gathers a row's replays, finds its best peer and checks it.
func makeRow(w *loaded, cp measure.Capacity, n int, ts []*task, peers []string) (Row, error) {
	row := Row{Workload: w.item.Name, Capacity: cp.String(), Entries: n, DistinctKeys: w.distinct, Reads: w.reads(), Warmup: w.warmup, HitRatio: map[string]float64{}}
	byCache := map[string][]hitratio.Result{}
	byRanking := map[string][]hitratio.Result{} // Config.Rankings' replays
	for _, t := range ts {
		if t.err != nil {
			return Row{}, fmt.Errorf("corpus: %s: %w", w.item.Name, t.err)
		}
		if t.pinned {
			byRanking[t.ranking] = append(byRanking[t.ranking], t.res)
		} else {
			byCache[t.peer.Name] = append(byCache[t.peer.Name], t.res)
		}
	}
	for name, rs := range byRanking {
		if row.Pinned == nil {
			row.Pinned = map[string]float64{}
		}
		m := median(rs)
		row.Pinned[name] = m.HitRatio()
		row.PinnedTimeline = addTimeline(row.PinnedTimeline, name, m)
	}
	hits := map[string]hitratio.Result{}
	for name, rs := range byCache {
		hits[name] = median(rs)
		if name == TwochoicePeer {
			row.Policy = hits[name].Policy
		}
		row.HitRatio[display(name)] = hits[name].HitRatio()
		row.Timeline = addTimeline(row.Timeline, display(name), hits[name])
		if len(rs) > 1 {
			if row.Range == nil {
				row.Range = map[string][2]float64{}
			}
			row.Range[display(name)] = [2]float64{rs[0].HitRatio(), rs[len(rs)-1].HitRatio()}
		}
	}
	for _, p := range peers {
		if h, ok := row.HitRatio[p]; ok && (row.BestPeer == "" || h > row.Best) {
			row.BestPeer, row.Best = p, h
		}
	}
	if tc, ok := row.HitRatio[Twochoice]; ok && row.BestPeer != "" {
		m := 100 * (tc - row.Best)
		row.Margin = &m
	}
	// The bounds hold over a whole stream, warm-up included (see
	// hitratio.Result.WarmupHits).
	all := func(r hitratio.Result) int64 { return r.Hits + r.WarmupHits }
	forced, bypass := all(hits[hitratio.BeladyName]), all(hits[hitratio.BeladyBypassName])
	if forced > bypass {
		row.Problems = append(row.Problems, fmt.Sprintf("belady has %d hits, above belady-bypass's %d", forced, bypass))
	}
	// Every replay is checked, not only the median.
	for _, t := range ts {
		r := t.res
		if strings.HasPrefix(t.peer.Name, "belady") {
			continue
		}
		name := t.name()
		if !t.peer.Refuses && all(r) > forced {
			row.Problems = append(row.Problems, fmt.Sprintf("%s has %d hits, above belady's %d, though it keeps every key set", name, all(r), forced))
		}
		if all(r) > bypass {
			row.Problems = append(row.Problems, fmt.Sprintf("%s has %d hits, above belady-bypass's %d", name, all(r), bypass))
		}
		if r.Peak > n {
			row.Problems = append(row.Problems, fmt.Sprintf("%s held %d entries, past its capacity of %d", name, r.Peak, n))
		}
	}
	return row, nil
}

// addTimeline returns m with r's timeline as hit ratios under name, or m
// as it is if r has none.
func addTimeline(m map[string][]float64, name string, r hitratio.Result) map[string][]float64 {
	if len(r.Timeline) == 0 {
		return m
	}
	if m == nil {
		m = map[string][]float64{}
	}
	hs := make([]float64, len(r.Timeline))
	for i, w := range r.Timeline {
		hs[i] = w.HitRatio()
	}
	m[name] = hs
	return m
}

// median returns the median of rs by hits (the lower of the middle two
// for an even number), sorting rs.
func median(rs []hitratio.Result) hitratio.Result {
	slices.SortFunc(rs, func(a, b hitratio.Result) int { return cmp.Compare(a.Hits, b.Hits) })
	return rs[(len(rs)-1)/2]
}

// name is the replay's cache as the checks and the progress name it:
// its column's name, with the ranking of a pinned twochoice.
func (t *task) name() string {
	if t.ranking != "" {
		return display(t.peer.Name) + " pinned to " + t.ranking
	}
	return display(t.peer.Name)
}

// each calls f(0), …, f(n-1) on up to parallel goroutines, in that order
// of starting, and returns the first error, or ctx's once it is done; no
// call starts after either.
func each(ctx context.Context, n, parallel int, f func(i int) error) error {
	var (
		next  atomic.Int64
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	failed := func() bool { mu.Lock(); defer mu.Unlock(); return first != nil }
	for range min(parallel, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || failed() {
					return
				}
				err := ctx.Err()
				if err == nil {
					err = f(i)
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// cancelable stops a workload when ctx is done, so that an interrupt
// ends the replays.
type cancelable struct {
	ctx context.Context
	w   workload.Workload[uint64]
}

func (c *cancelable) Name() string { return c.w.Name() }

func (c *cancelable) Read(reqs []workload.Request[uint64]) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Read(reqs)
}
