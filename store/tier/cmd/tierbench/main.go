// Command tierbench compares near-caches of a Redis server under the same
// workload: rueidis with no local cache, with its own (an LRU bounded by
// bytes), and with a twochoice tier bounded by the same number of bytes.
//
//	go run ./cmd/tierbench                      # starts a redis-server of its own
//	go run ./cmd/tierbench -addr 127.0.0.1:6379 # or uses one (it writes keys bench:*)
//
// For each near-cache it measures, in this order:
//
//   - the memory: heap bytes per cached entry after reading more distinct
//     keys than the budget holds (runtime.MemStats around the fill, less
//     what a client without a cache takes for the same reads);
//   - the Zipf workload: reads of keys drawn from a Zipf law (writes too
//     with -writes), from -goroutines goroutines: the near-cache's hit
//     ratio, requests per second and the latency of each request;
//   - the cost of a hit: reads of -hot keys that all fit, without timing
//     each one (a clock read costs as much as a hit here), as the CPU time
//     the process spends per read (the wall clock would count the time it
//     waits for a core on a shared machine), in rounds that alternate the
//     caches; the median of the rounds is reported. For the client
//     without a cache it is the client's CPU time per round trip, not the
//     round trip's latency: the Zipf workload's miss p50 gives that.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/twochoice/twochoice/store/tier"
)

type config struct {
	addr       string
	keys       int
	valueBytes int
	zipf       float64
	budget     int64
	goroutines int
	ops        int
	writes     float64
	hot        int
	hitOps     int
	rounds     int
	seed       uint64
	modes      []string
}

func main() {
	var c config
	var modes string
	flag.StringVar(&c.addr, "addr", "", "Redis server host:port (empty: start a redis-server on a free loopback port)")
	flag.IntVar(&c.keys, "keys", 200_000, "distinct keys")
	flag.IntVar(&c.valueBytes, "value", 100, "bytes per value")
	flag.Float64Var(&c.zipf, "zipf", 1.01, "Zipf exponent s (> 1) of the key popularity")
	flag.Int64Var(&c.budget, "budget", 8<<20, "near-cache budget in bytes, for both caches")
	flag.IntVar(&c.goroutines, "goroutines", 4, "goroutines issuing requests")
	flag.IntVar(&c.ops, "ops", 1_000_000, "requests of the Zipf workload per cache (after as many to warm up)")
	flag.Float64Var(&c.writes, "writes", 0, "fraction of the Zipf workload's requests that are writes (SET)")
	flag.IntVar(&c.hot, "hot", 1000, "keys read by the hit-cost phase")
	flag.IntVar(&c.hitOps, "hitops", 2_000_000, "reads per round of the hit-cost phase")
	flag.IntVar(&c.rounds, "rounds", 5, "rounds of the hit-cost phase")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the key draws")
	flag.StringVar(&modes, "modes", "none,rueidis,twochoice", "near-caches to compare")
	flag.Parse()
	c.modes = strings.Split(modes, ",")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "tierbench:", err)
		os.Exit(1)
	}
}

// A mode is one near-cache under test.
type mode struct {
	name   string
	client rueidis.Client
	tier   *tier.Tier
	mem    memory
	load   loadResult
	hitNs  []float64 // per round
}

func (m *mode) close() { m.client.Close() }

func newMode(c config, name string) (*mode, error) {
	m := &mode{name: name}
	opt := rueidis.ClientOption{
		InitAddress: []string{c.addr},
		// One connection to the server, so that rueidis's per-connection
		// budget is the whole budget, as the tier's is.
		PipelineMultiplex: -1,
	}
	switch name {
	case "none":
		opt.DisableCache = true
	case "rueidis":
		opt.CacheSizeEachConn = int(c.budget)
	case "twochoice":
		t, err := tier.New(tier.Options{MaxBytes: c.budget})
		if err != nil {
			return nil, err
		}
		m.tier = t
		opt.NewCacheStoreFn = t.NewCacheStore
	default:
		return nil, fmt.Errorf("unknown mode %q (want none, rueidis or twochoice)", name)
	}
	var err error
	m.client, err = rueidis.NewClient(opt)
	return m, err
}

func run(ctx context.Context, c config, out io.Writer) error {
	if c.zipf <= 1 {
		return fmt.Errorf("-zipf %v: the exponent must be above 1", c.zipf)
	}
	if c.addr == "" {
		srv, err := startServer(ctx)
		if err != nil {
			return err
		}
		defer srv.stop()
		c.addr = srv.addr
	}
	fmt.Fprintf(out, "tierbench: %s, %d keys of %d-byte values, Zipf s=%.2f, budget %d bytes, %d goroutines, seed %d, GOMAXPROCS %d\n",
		c.addr, c.keys, c.valueBytes, c.zipf, c.budget, c.goroutines, c.seed, runtime.GOMAXPROCS(0))
	keys := make([]string, c.keys)
	for i := range keys {
		keys[i] = "bench:" + strconv.Itoa(i)
	}
	if err := preload(ctx, c, keys); err != nil {
		return err
	}
	var modes []*mode
	defer func() {
		for _, m := range modes {
			m.close()
		}
	}()
	var base *memory
	for _, name := range c.modes {
		m, err := measureMemory(ctx, c, name, keys)
		if err != nil {
			return err
		}
		modes = append(modes, m)
		if name == "none" {
			base = &m.mem
		}
	}
	for _, m := range modes {
		r, err := zipfLoad(ctx, c, m, keys)
		if err != nil {
			return err
		}
		m.load = r
	}
	for range c.rounds {
		for _, m := range modes {
			ns, err := hitCost(ctx, c, m, keys)
			if err != nil {
				return err
			}
			m.hitNs = append(m.hitNs, ns)
		}
	}
	report(out, c, modes, base)
	return nil
}

// preload writes every key once, in pipelined batches.
func preload(ctx context.Context, c config, keys []string) error {
	cl, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{c.addr}, DisableCache: true})
	if err != nil {
		return err
	}
	defer cl.Close()
	val := strings.Repeat("v", c.valueBytes)
	for lo := 0; lo < len(keys); lo += 1000 {
		batch := make(rueidis.Commands, 0, 1000)
		for _, k := range keys[lo:min(lo+1000, len(keys))] {
			batch = append(batch, cl.B().Set().Key(k).Value(val).Build())
		}
		for _, r := range cl.DoMulti(ctx, batch...) {
			if err := r.Error(); err != nil {
				return fmt.Errorf("preloading: %w", err)
			}
		}
	}
	return nil
}

// memory is what a near-cache holds after the fill.
type memory struct {
	heap    int64 // heap bytes taken by the client and its cache
	entries int   // replies cached
}

// measureMemory creates the client of mode name and reads keys in order,
// more of them than its budget holds, and returns it with its memory.
func measureMemory(ctx context.Context, c config, name string, keys []string) (*mode, error) {
	before := heap()
	m, err := newMode(c, name)
	if err != nil {
		return nil, err
	}
	fill := keys
	if capacity, err := tier.Capacity(tier.Options{MaxBytes: c.budget}); err == nil {
		fill = keys[:min(len(keys), 4*capacity)]
	}
	for _, k := range fill {
		if err := m.client.DoCache(ctx, m.client.B().Get().Key(k).Cache(), time.Hour).Error(); err != nil {
			return nil, err
		}
	}
	m.mem.heap = heap() - before
	switch {
	case m.tier != nil:
		m.mem.entries = m.tier.Stats().Entries
	case name == "rueidis":
		// rueidis does not say how many entries its LRU holds; after a
		// fill in order it holds the latest keys read: count the hits
		// from the newest back to the first miss.
		for i := len(fill) - 1; i >= 0; i-- {
			r := m.client.DoCache(ctx, m.client.B().Get().Key(fill[i]).Cache(), time.Hour)
			if !r.IsCacheHit() {
				break
			}
			m.mem.entries++
		}
	}
	return m, nil
}

// heap returns the live heap after a collection.
func heap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// loadResult is what the Zipf workload measured.
type loadResult struct {
	ops, hits, writes int64
	elapsed           time.Duration
	lat               *histogram // every request
	hitLat, missLat   *histogram // reads answered by the near-cache, or not
}

// zipfLoad runs the Zipf workload through m, after as many requests to
// warm its cache up.
func zipfLoad(ctx context.Context, c config, m *mode, keys []string) (loadResult, error) {
	perm := rand.New(rand.NewPCG(c.seed, 0)).Perm(len(keys)) // popularity rank → key
	val := strings.Repeat("w", c.valueBytes)
	var res loadResult
	for phase := range 2 {
		measure := phase == 1
		var (
			wg                sync.WaitGroup
			mu                sync.Mutex
			firstErr          error
			next              atomic.Int64
			ops, hits, writes atomic.Int64
		)
		lat, hitLat, missLat := newHistogram(), newHistogram(), newHistogram()
		start := time.Now()
		for g := range c.goroutines {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(c.seed, uint64(1+phase*1000+g)))
				z := rand.NewZipf(r, c.zipf, 1, uint64(len(keys)-1))
				l, hl, ml := newHistogram(), newHistogram(), newHistogram()
				for next.Add(1) <= int64(c.ops) {
					k := keys[perm[z.Uint64()]]
					t0 := time.Now()
					if c.writes > 0 && r.Float64() < c.writes {
						if err := m.client.Do(ctx, m.client.B().Set().Key(k).Value(val).Build()).Error(); err != nil {
							mu.Lock()
							firstErr = err
							mu.Unlock()
							return
						}
						l.add(time.Since(t0))
						writes.Add(1)
						continue
					}
					res := m.client.DoCache(ctx, m.client.B().Get().Key(k).Cache(), time.Hour)
					d := time.Since(t0)
					if err := res.Error(); err != nil {
						mu.Lock()
						firstErr = err
						mu.Unlock()
						return
					}
					l.add(d)
					if res.IsCacheHit() {
						hl.add(d)
						hits.Add(1)
					} else {
						ml.add(d)
					}
					ops.Add(1)
				}
				mu.Lock()
				lat.merge(l)
				hitLat.merge(hl)
				missLat.merge(ml)
				mu.Unlock()
			})
		}
		wg.Wait()
		if firstErr != nil {
			return res, firstErr
		}
		if measure {
			res = loadResult{ops: ops.Load(), hits: hits.Load(), writes: writes.Load(), elapsed: time.Since(start),
				lat: lat, hitLat: hitLat, missLat: missLat}
		}
	}
	return res, nil
}

// hitCost returns the mean time per read, in ns, of c.hitOps reads of
// c.hot keys through m on c.goroutines goroutines, all of them hits once
// the keys are cached (round trips for the mode without a cache).
func hitCost(ctx context.Context, c config, m *mode, keys []string) (float64, error) {
	hot := keys[:min(c.hot, len(keys))]
	for _, k := range hot {
		m.client.DoCache(ctx, m.client.B().Get().Key(k).Cache(), time.Hour)
	}
	ops := c.hitOps
	if m.name == "none" { // round trips: fewer, for the same time
		ops = max(ops/100, 10_000)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Bool
	start := time.Now()
	cpu0, cpuOK := cpuTime()
	for g := range c.goroutines {
		wg.Go(func() {
			i := g * 7919
			for next.Add(1) <= int64(ops) {
				if err := m.client.DoCache(ctx, m.client.B().Get().Key(hot[i%len(hot)]).Cache(), time.Hour).Error(); err != nil {
					failed.Store(true)
					return
				}
				i++
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		return 0, fmt.Errorf("%s: a read failed in the hit-cost phase", m.name)
	}
	if cpu1, ok := cpuTime(); ok && cpuOK {
		// The CPU time of the process per read.
		return float64((cpu1 - cpu0).Nanoseconds()) / float64(ops), nil
	}
	// Per read and per goroutine: the time one read takes its goroutine.
	return float64(time.Since(start).Nanoseconds()) * float64(c.goroutines) / float64(ops), nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func report(out io.Writer, c config, modes []*mode, base *memory) {
	fmt.Fprintf(out, "\n| near-cache | entries | heap bytes/entry | hit ratio | requests/s | p50 | p99 | hit p50 | miss p50 | CPU ns/hit (median of %d) |\n", c.rounds)
	fmt.Fprintln(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	ns := map[string]float64{}
	for _, m := range modes {
		perEntry := "—"
		if m.mem.entries > 0 {
			h := m.mem.heap
			if base != nil {
				h -= base.heap
			}
			perEntry = strconv.FormatInt(h/int64(m.mem.entries), 10)
		}
		r := m.load
		ratio := float64(r.hits) / float64(max(1, r.ops))
		ns[m.name] = median(m.hitNs)
		fmt.Fprintf(out, "| %s | %d | %s | %.4f | %.0f | %v | %v | %v | %v | %.0f |\n",
			m.name, m.mem.entries, perEntry, ratio, float64(r.ops+r.writes)/r.elapsed.Seconds(),
			r.lat.quantile(0.5), r.lat.quantile(0.99), r.hitLat.quantile(0.5), r.missLat.quantile(0.5), ns[m.name])
	}
	fmt.Fprintln(out)
	if a, b := ns["twochoice"], ns["rueidis"]; a > 0 && b > 0 {
		fmt.Fprintf(out, "hit cost, twochoice / rueidis: %.2f (rounds: twochoice %s; rueidis %s)\n", a/b, fmtNs(modeOf(modes, "twochoice").hitNs), fmtNs(modeOf(modes, "rueidis").hitNs))
	}
	if none := modeOf(modes, "none"); none.load.lat != nil {
		rt := float64(none.load.lat.quantile(0.5).Nanoseconds())
		for _, name := range []string{"rueidis", "twochoice"} {
			if h := ns[name]; h > 0 {
				fmt.Fprintf(out, "round trip (p50 without a near-cache, %v) / %s hit (CPU): %.0f×\n", none.load.lat.quantile(0.5), name, rt/h)
			}
		}
	}
}

func modeOf(modes []*mode, name string) *mode {
	for _, m := range modes {
		if m.name == name {
			return m
		}
	}
	return &mode{}
}

func fmtNs(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strings.Join(parts, " ")
}
