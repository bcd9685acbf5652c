package measure

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/workload"
)

// countingCache is an unbounded map that counts its calls and can make
// Get take a given time.
type countingCache struct {
	mu       sync.Mutex
	m        map[uint64]Value
	gets     atomic.Int64
	sets     atomic.Int64
	getDelay time.Duration
}

func (c *countingCache) Name() string { return "counting" }

func (c *countingCache) Get(k uint64) (Value, bool) {
	c.gets.Add(1)
	if c.getDelay > 0 {
		for t0 := nanotime(); nanotime()-t0 < int64(c.getDelay); {
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *countingCache) Set(k uint64, v Value) {
	c.sets.Add(1)
	c.mu.Lock()
	c.m[k] = v
	c.mu.Unlock()
}

func (c *countingCache) Len() int { c.mu.Lock(); defer c.mu.Unlock(); return len(c.m) }
func (c *countingCache) Close()   {}

// periodic returns n requests for keys i mod keys, every tenth a write.
func periodic(n, keys int) []workload.Request[uint64] {
	reqs := make([]workload.Request[uint64], n)
	for i := range reqs {
		reqs[i].Key = uint64(i % keys)
		if i%10 == 9 {
			reqs[i].Op = workload.Write
		}
	}
	return reqs
}

// The counts of a timed run agree with the calls the cache saw: a Get per
// read, a Set per write and per miss; writes are honoured, and only first
// requests for a key miss.
func TestThroughputCounts(t *testing.T) {
	reqs := periodic(1000, 100)
	for _, g := range []int{1, 3} {
		c := &countingCache{m: map[uint64]Value{}}
		streams := make([]Stream[uint64], g)
		for i := range streams {
			streams[i] = Stream[uint64]{Reqs: reqs, Start: i * 333}
		}
		r, err := Throughput(context.Background(), c, streams, ThroughputOptions{Duration: 20 * time.Millisecond, Warmup: 50})
		if err != nil {
			t.Fatal(err)
		}
		// The warm-up's reads each Get and may Set (whether a key is new
		// depends on the goroutines' interleaving); its writes each Set.
		gets, sets := c.gets.Load(), c.sets.Load()
		var warmReads, warmWrites int64
		for i := range g {
			for _, q := range reqs[i*333 : i*333+50] {
				if q.Op == workload.Write {
					warmWrites++
				} else {
					warmReads++
				}
			}
		}
		misses := r.Reads - r.Hits
		switch extra := sets - r.Writes - misses; {
		case r.Threads != g || r.Requests == 0 || r.Requests != r.Reads+r.Writes:
			t.Fatalf("g=%d: %+v", g, r)
		case gets-warmReads != r.Reads:
			t.Errorf("g=%d: %d Gets in the timed part, %d reads counted", g, gets-warmReads, r.Reads)
		case extra < warmWrites || extra > warmWrites+warmReads:
			t.Errorf("g=%d: %d Sets, %d writes and %d misses counted", g, sets, r.Writes, misses)
		case misses > 100:
			t.Errorf("g=%d: %d misses over 100 keys", g, misses)
		}
		// One request in ten is a write, give or take one per goroutine.
		if d := r.Writes*10 - r.Requests; d < -10*int64(g) || d > 10*int64(g) {
			t.Errorf("g=%d: %d writes in %d requests", g, r.Writes, r.Requests)
		}
		if r.Get.Samples == 0 || r.Get.Samples > uint64(r.Requests)/64+uint64(g) || r.RequestsPerSec() <= 0 {
			t.Errorf("g=%d: %d Get samples for %d requests; %v req/s", g, r.Get.Samples, r.Requests, r.RequestsPerSec())
		}
	}
}

// A Get that takes 20 µs is measured as at least that, and not wildly
// more (the machine may be busy: the bound is loose).
func TestThroughputLatency(t *testing.T) {
	c := &countingCache{m: map[uint64]Value{}, getDelay: 20 * time.Microsecond}
	st := []Stream[uint64]{{Reqs: periodic(100, 10)}}
	o := ThroughputOptions{Duration: 30 * time.Millisecond, SampleEvery: 1, TimerOverhead: TimerOverhead()}
	r, err := Throughput(context.Background(), c, st, o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Get.Samples < 100 || r.Get.P50 < 19_000 || r.Get.P50 > 1_000_000 || r.Get.P99 < r.Get.P50 || r.Get.P999 < r.Get.P99 {
		t.Fatalf("Get latency %+v, want p50 of about 20 µs", r.Get)
	}
	if r.Set.Samples == 0 || r.Set.P50 > r.Get.P50 {
		t.Fatalf("Set latency %+v next to Get %+v", r.Set, r.Get)
	}
}

func TestThroughputErrors(t *testing.T) {
	c, _ := caches.NewMap[uint64, Value](caches.Options{})
	o := ThroughputOptions{Duration: time.Millisecond}
	for _, st := range [][]Stream[uint64]{nil, {{}}, {{Reqs: periodic(5, 5), Start: 5}}} {
		if _, err := Throughput(context.Background(), c, st, o); !errors.Is(err, ErrConfig) {
			t.Errorf("streams %v: %v", st, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Throughput(ctx, c, []Stream[uint64]{{Reqs: periodic(5, 5)}}, ThroughputOptions{Duration: time.Hour}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// The timer overhead is what back-to-back clock reads measure: positive
// and far below a microsecond on any machine the harness is meant for.
func TestTimerOverhead(t *testing.T) {
	if o := TimerOverhead(); o < 0 || o > 5000 {
		t.Fatalf("timer overhead %d ns", o)
	}
}
