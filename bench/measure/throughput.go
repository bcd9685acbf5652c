package measure

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/workload"
)

// Stream is the requests one goroutine of a timed run replays, from Start,
// wrapping around at the end, for as long as the run lasts. Goroutines may
// share Reqs (a trace held once in memory) with different starts; they
// only read it.
type Stream[K caches.Key] struct {
	Reqs  []workload.Request[K]
	Start int
}

// ThroughputOptions configure [Throughput].
type ThroughputOptions struct {
	// Duration is how long the timed part runs.
	Duration time.Duration
	// Warmup is the number of requests each goroutine replays, untimed,
	// before the timed part, from the start of its stream: enough to fill
	// the cache. The timed part goes on from where the warm-up stopped.
	Warmup int
	// SampleEvery times one request in SampleEvery (rounded up to a power
	// of two; 0 means 64) for the latency percentiles.
	SampleEvery int
	// TimerOverhead is subtracted from every latency sample, in
	// nanoseconds (see [TimerOverhead]).
	TimerOverhead int64
}

// Latency is a summary of sampled call latencies, in nanoseconds, with the
// timer's overhead subtracted.
type Latency struct {
	P50, P99, P999 float64
	Samples        uint64
}

func summarize(h *histogram) Latency {
	return Latency{P50: h.quantile(0.5), P99: h.quantile(0.99), P999: h.quantile(0.999), Samples: h.n}
}

// ThroughputResult is what a timed run measured.
type ThroughputResult struct {
	Threads  int
	Requests int64         // requests served in the timed part, by all goroutines
	Elapsed  time.Duration // wall time of the timed part
	Reads    int64         // read requests
	Hits     int64         // reads whose Get found the key
	Writes   int64         // write requests
	Get, Set Latency
	// GCCPUFraction is the share of the available CPU time that the
	// garbage collector took during the run (see gcFraction), and
	// GCCycles the collection cycles that ended in it.
	GCCPUFraction float64
	GCCycles      uint64
	// AllocsPerRequest is the number of heap allocations per request in
	// the timed part, for the whole process.
	AllocsPerRequest float64
}

// RequestsPerSec returns Requests / Elapsed.
func (r ThroughputResult) RequestsPerSec() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// HitRatio returns Hits / Reads of the timed part.
func (r ThroughputResult) HitRatio() float64 {
	if r.Reads == 0 {
		return 0
	}
	return float64(r.Hits) / float64(r.Reads)
}

// Value is the type of the values the harness caches: 8 bytes, the size
// of a pointer or a small record's id.
type Value = uint64

// value is what the runs store. It is 2^40 rather than 0 so that a cache
// that boxes values in interfaces (sync.Map) allocates as it would for
// real data: Go boxes the integers 0 to 255 without allocating.
const value Value = 1 << 40

// checkEvery is the number of requests a goroutine serves between two
// looks at the stop flag.
const checkEvery = 256

// Throughput serves requests from c on one goroutine per stream, as a cache
// in front of a slower store would: a read calls Get and, when it misses,
// Set; a write calls Set. After the warm-up every goroutine starts at once
// and stops when o.Duration has passed (or ctx is done, which makes it
// return ctx's error); the result counts the requests of the timed part.
//
// One request in o.SampleEvery is timed, Get and Set separately, with
// the clock read around the single call. Between the warm-up and the
// timed part the garbage of earlier work is collected, so that no run pays
// for another's.
func Throughput[K caches.Key](ctx context.Context, c caches.Cache[K, Value], streams []Stream[K], o ThroughputOptions) (ThroughputResult, error) {
	g := len(streams)
	if g == 0 {
		return ThroughputResult{}, fmt.Errorf("%w: no stream to replay", ErrConfig)
	}
	for _, s := range streams {
		if len(s.Reqs) == 0 || s.Start < 0 || s.Start >= len(s.Reqs) {
			return ThroughputResult{}, fmt.Errorf("%w: an empty stream, or a start outside it", ErrConfig)
		}
	}
	mask := uint64(64 - 1)
	if o.SampleEvery > 0 {
		m := uint64(1)
		for m < uint64(o.SampleEvery) {
			m <<= 1
		}
		mask = m - 1
	}

	// Warm-up: every goroutine at once, untimed.
	pos := make([]int, g)
	var wg sync.WaitGroup
	for i, s := range streams {
		wg.Go(func() {
			pos[i] = warm(c, s, o.Warmup)
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return ThroughputResult{}, err
	}

	workers := make([]*worker[K], g)
	for i, s := range streams {
		workers[i] = &worker[K]{c: c, reqs: s.Reqs, pos: pos[i], mask: mask, overhead: o.TimerOverhead}
	}
	runtime.GC()
	var stop atomic.Bool
	var ready sync.WaitGroup
	start := make(chan struct{})
	ready.Add(g)
	for _, w := range workers {
		wg.Go(func() {
			ready.Done()
			<-start
			w.run(&stop)
		})
	}
	ready.Wait()
	before := readRuntimeStats()
	t0 := time.Now()
	close(start)
	timer := time.NewTimer(o.Duration)
	select {
	case <-timer.C:
	case <-ctx.Done():
		timer.Stop()
	}
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(t0)
	after := readRuntimeStats()
	if err := ctx.Err(); err != nil {
		return ThroughputResult{}, err
	}

	r := ThroughputResult{Threads: g, Elapsed: elapsed, GCCycles: after.gcCycles - before.gcCycles,
		GCCPUFraction: gcFraction(before, after, elapsed.Seconds(), runtime.GOMAXPROCS(0))}
	var get, set histogram
	for _, w := range workers {
		r.Reads += w.reads
		r.Hits += w.hits
		r.Writes += w.writes
		get.merge(&w.get)
		set.merge(&w.set)
	}
	r.Requests = r.Reads + r.Writes
	r.Get, r.Set = summarize(&get), summarize(&set)
	if r.Requests > 0 {
		r.AllocsPerRequest = float64(after.allocs-before.allocs) / float64(r.Requests)
	}
	return r, nil
}

// warm replays n requests of s from its start and returns where it
// stopped.
func warm[K caches.Key](c caches.Cache[K, Value], s Stream[K], n int) int {
	i := s.Start
	for range n {
		q := s.Reqs[i]
		if q.Op == workload.Write {
			c.Set(q.Key, value)
		} else if _, ok := c.Get(q.Key); !ok {
			c.Set(q.Key, value)
		}
		if i++; i == len(s.Reqs) {
			i = 0
		}
	}
	return i
}

// worker is one goroutine of a timed run. Its counters and histograms are
// its own, merged after the run, so goroutines share no line but the
// stop flag (which they only read).
type worker[K caches.Key] struct {
	c        caches.Cache[K, Value]
	reqs     []workload.Request[K]
	pos      int
	mask     uint64
	overhead int64

	reads, hits, writes int64
	get, set            histogram
}

func (w *worker[K]) run(stop *atomic.Bool) {
	c, reqs, i, mask := w.c, w.reqs, w.pos, w.mask
	// The counters are locals, kept in registers, and stored once at the
	// end.
	var n uint64
	var reads, hits, writes int64
	for !stop.Load() {
		for range checkEvery {
			q := reqs[i]
			if i++; i == len(reqs) {
				i = 0
			}
			n++
			switch {
			case n&mask == 0:
				r, h := w.timed(q)
				reads += r
				hits += h
				writes += 1 - r
			case q.Op == workload.Write:
				c.Set(q.Key, value)
				writes++
			default:
				reads++
				if _, ok := c.Get(q.Key); ok {
					hits++
				} else {
					c.Set(q.Key, value)
				}
			}
		}
	}
	w.reads, w.hits, w.writes = reads, hits, writes
}

// timed serves one request and records how long its calls took. It
// returns 1, h for a read (h = 1 for a hit) and 0, 0 for a write.
func (w *worker[K]) timed(q workload.Request[K]) (read, hit int64) {
	if q.Op == workload.Write {
		t0 := nanotime()
		w.c.Set(q.Key, value)
		w.set.add(nanotime() - t0 - w.overhead)
		return 0, 0
	}
	t0 := nanotime()
	_, ok := w.c.Get(q.Key)
	w.get.add(nanotime() - t0 - w.overhead)
	if ok {
		return 1, 1
	}
	t0 = nanotime()
	w.c.Set(q.Key, value)
	w.set.add(nanotime() - t0 - w.overhead)
	return 1, 0
}
