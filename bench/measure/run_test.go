package measure

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/hitratio"
	"github.com/twochoice/twochoice/bench/workload"
)

// small is a quick comparison: Zipf over 20,000 keys, caches of 1% and 5%.
func small(names ...string) Config {
	return Config{
		Workload: Spec{Kind: Zipf, S: 1, Keys: 20_000}, Seed: 7, Caches: names,
		Capacities: []Capacity{{Share: 0.01}, {Share: 0.05}}, Threads: []int{1, 2},
		Duration: 10 * time.Millisecond, Warmup: 20_000,
	}
}

// A run has the rows its documentation promises, each hit ratio is what a
// replay of the same seeded requests gives, and the figures are sane.
func TestRun(t *testing.T) {
	var mu sync.Mutex
	var fracs []float64
	c := small("lru", "map")
	c.Progress = func(f float64, _ string) { mu.Lock(); fracs = append(fracs, f); mu.Unlock() }
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Capacities, []int{200, 1000}) || res.DistinctKeys != 20_000 || len(res.TopShare) != 2 ||
		res.ReplayRequests != 40_000 || res.ReplayWarmup != 20_000 || res.Workload != "zipf(s=1,n=20000,seed=7)" {
		t.Fatalf("result %+v", res)
	}
	if !slices.IsSorted(fracs) || fracs[len(fracs)-1] != 1 {
		t.Errorf("progress %v", fracs)
	}

	// The reference: the same requests replayed by package hitratio.
	z, _ := workload.NewZipf(1, 20_000, 7)
	reqs, _ := workload.Collect[uint64](z, 40_000)
	lru, _ := caches.Lookup[uint64, Value]("lru")
	want := map[int]float64{}
	for _, cp := range res.Capacities {
		cache, _ := lru.New(caches.Options{Capacity: cp, Sync: true})
		r, _ := hitratio.Replay(cache, workload.Replay("z", reqs), 20_000)
		want[cp] = r.HitRatio()
	}

	var got []string
	for _, r := range res.Rows {
		got = append(got, r.Cache+"/"+strconv.Itoa(r.Capacity)+"/"+strconv.Itoa(r.Threads))
		if r.Workload != res.Workload || r.Seed != 7 {
			t.Errorf("row %+v", r)
		}
		switch {
		case r.Cache == "lru":
			if r.HitRatio == nil || *r.HitRatio != want[r.Capacity] {
				t.Errorf("lru at %d: hit ratio %v, replay %v", r.Capacity, r.HitRatio, want[r.Capacity])
			}
			if r.OpsPerSec == nil || *r.OpsPerSec <= 0 || r.P99NS == nil || r.SetP99NS == nil || r.BytesPerEntry == nil ||
				r.GCCPUFraction == nil || r.AllocsPerOp == nil || r.RunHitRatio == nil || r.Entries != r.Capacity {
				t.Errorf("lru row lacks a measure: %+v", r)
			}
		case r.Cache == "belady":
			seq, _ := hitratio.NewSequence(reqs)
			opt, _ := hitratio.BeladyPeer[uint64, Value](seq, hitratio.Forced).New(caches.Options{Capacity: r.Capacity})
			b, _ := hitratio.Replay(opt, workload.Replay("z", reqs), 20_000)
			if r.HitRatio == nil || *r.HitRatio != b.HitRatio() || *r.HitRatio < want[r.Capacity] || r.OpsPerSec != nil || r.BytesPerEntry != nil {
				t.Errorf("belady at %d: row %+v, replay %v, lru %v", r.Capacity, r, b.HitRatio(), want[r.Capacity])
			}
		case r.Threads > 0: // the map's timed rows
			if r.HitRatio == nil || *r.HitRatio != res.Ceiling || r.OpsPerSec == nil || r.BytesPerEntry != nil {
				t.Errorf("map timed row %+v (ceiling %v)", r, res.Ceiling)
			}
		default: // the map's memory rows
			if r.BytesPerEntry == nil || r.HitRatio != nil || r.OpsPerSec != nil || r.Entries != r.Capacity {
				t.Errorf("map memory row %+v", r)
			}
		}
	}
	wantRows := []string{"lru/200/1", "lru/200/2", "lru/1000/1", "lru/1000/2", "belady/200/0", "belady/1000/0", "map/0/1", "map/0/2", "map/200/0", "map/1000/0"}
	if !slices.Equal(got, wantRows) {
		t.Errorf("rows %v, want %v", got, wantRows)
	}
	if res.Ceiling <= want[1000] || res.TopShare[0] >= res.TopShare[1] {
		t.Errorf("ceiling %v, lru %v, top shares %v", res.Ceiling, want, res.TopShare)
	}
}

// The same seed gives the same hit ratios; only the asked measures run.
func TestRunReplaysAndSelects(t *testing.T) {
	c := small("arc", "2q")
	c.Measures = MeasureHitRatio
	a, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Run(context.Background(), c)
	for i := range a.Rows {
		if *a.Rows[i].HitRatio != *b.Rows[i].HitRatio {
			t.Errorf("row %d: %v then %v", i, *a.Rows[i].HitRatio, *b.Rows[i].HitRatio)
		}
		if a.Rows[i].OpsPerSec != nil || a.Rows[i].BytesPerEntry != nil || a.Rows[i].Threads != 0 {
			t.Errorf("hit ratio only, yet row %+v", a.Rows[i])
		}
	}
	if len(a.Rows) != 6 { // arc, 2q and belady at 2 capacities
		t.Errorf("%d rows", len(a.Rows))
	}
	c.Seed = 8
	d, _ := Run(context.Background(), c)
	if d.Workload == a.Workload {
		t.Error("the seed is not in the workload's name")
	}
}

// Trace and key files: replayed whole, every request counted, capacities
// as shares of the distinct keys.
func TestRunFiles(t *testing.T) {
	dir := t.TempDir()
	var trace, keys strings.Builder
	for i := range 3000 {
		trace.WriteString(strconv.Itoa(i%700) + " 2 0 " + strconv.Itoa(i) + "\n") // 6000 requests over 701 blocks
		keys.WriteString("user:" + strconv.Itoa(i%500) + "\n")
	}
	tp, kp := filepath.Join(dir, "t.lis"), filepath.Join(dir, "k.txt")
	if err := errors.Join(os.WriteFile(tp, []byte(trace.String()), 0o644), os.WriteFile(kp, []byte(keys.String()), 0o644)); err != nil {
		t.Fatal(err)
	}
	for _, sp := range []Spec{{Kind: Trace, Path: tp}, {Kind: Keys, Path: kp}} {
		c := small("lru", "syncmap")
		c.Workload = sp
		c.Capacities = []Capacity{{Share: 0.1}}
		c.Threads = []int{2}
		res, err := Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		want := map[Kind]int{Trace: 701, Keys: 500}[sp.Kind]
		if res.DistinctKeys != want || res.Capacities[0] != want/10 || res.ReplayWarmup != 0 || res.ReplayRequests != map[Kind]int64{Trace: 6000, Keys: 3000}[sp.Kind] {
			t.Errorf("%v: %+v", sp, res)
		}
		for _, r := range res.Rows {
			if r.Threads == 2 && (r.OpsPerSec == nil || *r.OpsPerSec <= 0) {
				t.Errorf("%v: row %+v", sp, r)
			}
		}
	}
}

func TestRunErrors(t *testing.T) {
	ctx := context.Background()
	c := small("lru")
	c.Caches = []string{"lru", "memcached"}
	if _, err := Run(ctx, c); !errors.Is(err, caches.ErrUnknown) {
		t.Errorf("unknown cache: %v", err)
	}
	c.Caches = []string{"lru", "lru"}
	if _, err := Run(ctx, c); !errors.Is(err, ErrConfig) {
		t.Errorf("a cache twice: %v", err)
	}
	for _, bad := range []func(*Config){
		func(c *Config) { c.Capacities = nil },
		func(c *Config) { c.Capacities = []Capacity{{Entries: 0}} },
		func(c *Config) { c.Threads = []int{0} },
		func(c *Config) { c.Duration = 0 },
		func(c *Config) { c.Rounds = -1 },
	} {
		c := small("lru")
		bad(&c)
		if _, err := Run(ctx, c); !errors.Is(err, ErrConfig) {
			t.Errorf("config %+v: %v", c, err)
		}
	}
	c = small("lru")
	c.Workload = Spec{Kind: Trace, Path: filepath.Join(t.TempDir(), "none.lis")}
	if _, err := Run(ctx, c); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing trace: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Run(cctx, small("lru")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// Each goroutine of a generated workload gets its own seeded stream, the
// first one the start of the replay; a file's goroutines start apart.
func TestStreams(t *testing.T) {
	src, err := newUintSource(Spec{Kind: Uniform, Keys: 1000}, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer src.arena.free()
	if err := src.build(1 << 20); err != nil {
		t.Fatal(err)
	}
	st, _ := src.streams(3, streamLen)
	if len(st) != 3 || len(st[0].Reqs) != streamLen || !slices.Equal(st[0].Reqs, src.replay[:streamLen]) {
		t.Fatalf("stream 0 is not the start of the replay")
	}
	if slices.Equal(st[1].Reqs[:100], st[2].Reqs[:100]) || slices.Equal(st[0].Reqs[:100], st[1].Reqs[:100]) {
		t.Fatal("goroutines share a stream")
	}
	again, _ := src.streams(3, streamLen)
	if !slices.Equal(again[2].Reqs, st[2].Reqs) {
		t.Fatal("stream 2 differs between two calls")
	}
	off := offsets(make([]workload.Request[uint64], 10))
	st, _ = off(3, 0)
	if st[0].Start != 0 || st[1].Start != 3 || st[2].Start != 6 {
		t.Fatalf("starts %d %d %d", st[0].Start, st[1].Start, st[2].Start)
	}
}

func TestStreamLength(t *testing.T) {
	for _, c := range []struct {
		g    int
		d    time.Duration
		want int
	}{{1, time.Millisecond, 1 << 20}, {2, time.Second, 1 << 22}, {1, time.Hour, 1 << 23}, {64, time.Second, 1 << 19}, {4096, time.Second, 1 << 16}} {
		if got := streamLength(c.g, c.d); got != c.want {
			t.Errorf("streamLength(%d, %v) = %d, want %d", c.g, c.d, got, c.want)
		}
	}
}

func TestCeiling(t *testing.T) {
	reqs := workload.Reads([]uint64{1, 2, 1, 3, 1, 2, 4})
	reqs[5].Op = workload.Write // a write is not counted, but its key is seen
	// Counting from request 2: reads 1 (hit), 3, 1 (hit), 4.
	if got := ceiling(reqs, 2); got != 0.5 {
		t.Fatalf("ceiling %v, want 0.5", got)
	}
}

// A cache that refuses a capacity is skipped at that capacity, not the end
// of the comparison; a capacity past the distinct keys is refused.
func TestRunSkipsAndCapacityBound(t *testing.T) {
	spec, err := ParseSpec("zipf", 1, 1000)
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Workload: spec, Seed: 1, Caches: []string{"twochoice-goleft", "2q", "lru"}, Capacities: []Capacity{Entries(1), Entries(100)},
		Threads: []int{1}, Duration: time.Millisecond, Warmup: 1000}
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Cache != "twochoice-goleft" || res.Skipped[0].Capacity != 1 {
		t.Fatalf("skipped %+v", res.Skipped)
	}
	seen := map[string]bool{}
	for _, r := range res.Rows {
		seen[fmt.Sprintf("%s@%d", r.Cache, r.Capacity)] = true
	}
	for _, want := range []string{"2q@1", "lru@1", "twochoice-goleft@100", "2q@100"} {
		if !seen[want] {
			t.Errorf("no row %s in %v", want, seen)
		}
	}
	if seen["twochoice-goleft@1"] {
		t.Errorf("a row for the skipped pair")
	}
	c.Caches = []string{"twochoice-goleft"}
	c.Capacities = []Capacity{Entries(1)}
	if _, err := Run(context.Background(), c); !errors.Is(err, ErrConfig) {
		t.Errorf("nothing left to measure: %v", err)
	}
	c.Capacities = []Capacity{Entries(1001)}
	if _, err := Run(context.Background(), c); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "distinct") {
		t.Errorf("capacity past the distinct keys: %v", err)
	}
}

// A timed run in which no request completed has no figures, not zeros.
func TestRowsNoRequests(t *testing.T) {
	peers, err := Peers[uint64]([]string{"lru", "map"})
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Threads: []int{1}, Measures: MeasureThroughput}
	tp := map[key][]ThroughputResult{
		{"lru", 10, 1}: {{Threads: 1, Elapsed: time.Nanosecond}},
		{"map", 0, 1}:  {{Threads: 1, Requests: 100, Reads: 100, Hits: 50, Elapsed: time.Millisecond}},
	}
	for _, r := range rows(c, []int{10}, peers, nil, "w", nil, nil, nil, tp) {
		switch r.Cache {
		case "lru":
			if r.OpsPerSec != nil || r.RunHitRatio != nil || r.GCCPUFraction != nil || r.AllocsPerOp != nil || r.P50NS != nil {
				t.Errorf("lru with no request: %+v", r)
			}
		case "map":
			if r.OpsPerSec == nil || *r.OpsPerSec != 1e5 || r.RunHitRatio == nil || *r.RunHitRatio != 0.5 {
				t.Errorf("map: %+v", r)
			}
		}
	}
}

// A trace line that stands for more requests than the harness may hold is
// an error, not a process run out of memory.
// (The bound is lowered here, so the test does not expand 2^27 requests.)
func TestTraceTooLarge(t *testing.T) {
	defer func(m int) { maxFileRequests = m }(maxFileRequests)
	maxFileRequests = 1000
	dir := t.TempDir()
	for name, text := range map[string]string{"ok.lis": "0 1000 0 0\n", "huge.lis": "0 1001 0 0\n", "keys.txt": strings.Repeat("k\n", 1001)} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		var err error
		if name == "keys.txt" {
			_, err = newStringSource(Spec{Kind: Keys, Path: p}, 1)
		} else {
			_, err = newUintSource(Spec{Kind: Trace, Path: p}, 1)
		}
		if want := name != "ok.lis"; errors.Is(err, ErrWorkload) != want {
			t.Errorf("%s: %v (want an error: %v)", name, err, want)
		}
	}
}

// A capacity past MaxCapacity, given or a share of a huge workload, is
// ErrConfig before any cache is made: a cache of 10^8 entries and more
// (1% of --keys 10^10) ran the process out of memory, or made otter panic
// in makeslice.
func TestRunCapacityBound(t *testing.T) {
	for _, cp := range []Capacity{{Entries: MaxCapacity + 1}, {Share: 0.01}} {
		c := small("otter", "lru")
		c.Workload.Keys = 1 << 40
		c.Capacities = []Capacity{cp}
		if _, err := Run(context.Background(), c); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), strconv.Itoa(MaxCapacity)) {
			t.Errorf("capacity %v of 2^40 keys: %v", cp, err)
		}
	}
}

// Capacities that come to the same entries are measured once and listed
// in Result.Merged, in the order given.
func TestRunMergedCapacities(t *testing.T) {
	spec, err := ParseSpec("zipf", 1, 1000)
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Workload: spec, Seed: 1, Caches: []string{"lru"}, Capacities: []Capacity{{Share: 0.1}, Entries(50), Entries(100)},
		Threads: []int{1}, Duration: time.Millisecond, Warmup: 1000}
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Capacities, []int{50, 100}) {
		t.Errorf("capacities %v, want [50 100]", res.Capacities)
	}
	if len(res.Merged) != 1 || res.Merged[0].Entries != 100 || !slices.Equal(res.Merged[0].Given, []Capacity{{Share: 0.1}, Entries(100)}) {
		t.Errorf("merged %+v, want 10%% and 100 as 100 entries", res.Merged)
	}
}
