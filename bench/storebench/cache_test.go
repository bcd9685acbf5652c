package storebench

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/maypok86/otter/v2"
	"github.com/twochoice/twochoice/store"
)

// The cache benchmarks: twochoice as a bounded cache against otter, both
// holding a tenth or a hundredth of the keys of the Get workload (1M keys,
// Zipf 1.0; 4K keys with -short), so that most keys do not fit and Sets
// evict.
//
//	go test -c -o /tmp/storebench.test ./bench/storebench
//	for i in $(seq 10); do flock /tmp/twochoice-bench.lock \
//	  /tmp/storebench.test -test.run '^$' -test.bench 'Cache' -test.count 1 >> cache.txt; done

// cacheFractions are the shares of the keys the caches hold: 1/10, 1/100.
var cacheFractions = []int{10, 100}

// cachePeers builds the two caches of capacity n, full: each has seen the
// access sequence, or its first 4 × keys accesses (4M of 4M for the 1M
// keys; less with -short, so that CI's single runs stay quick).
func cachePeers(b *testing.B, w workload, fraction int) (tc, ot cache) {
	n := len(w.keys) / fraction
	s, err := store.NewCache(store.CacheOptions[string, int64]{Seed: 1, MaxEntries: n})
	if err != nil {
		b.Fatal(err)
	}
	tc = twochoiceCache{s}
	ot = otterCache{otter.Must(&otter.Options[string, int64]{MaximumSize: n, InitialCapacity: n})}
	for _, c := range []cache{tc, ot} {
		for i, k := range w.seq[:min(len(w.seq), 4*len(w.keys))] {
			c.Set(k, int64(i))
		}
	}
	settle(ot)
	if s.Len() != n {
		b.Fatalf("twochoice holds %d entries after the warm-up, want %d", s.Len(), n)
	}
	return tc, ot
}

// BenchmarkCacheSetRatio: Set of Zipf keys into a full cache, twochoice
// against otter in one paired loop (see BenchmarkGetRatio): x-peer is
// twochoice's time over otter's, below 1 is faster; 0.5 is twice otter's
// throughput.
func BenchmarkCacheSetRatio(b *testing.B) {
	benchCachePaired(b, func(c cache, k string, i int) int64 {
		c.Set(k, int64(i))
		return 0
	})
}

// BenchmarkCacheGetRatio: Get of Zipf keys from a full cache (hits and
// misses, no Set on a miss), paired against otter as above.
func BenchmarkCacheGetRatio(b *testing.B) {
	benchCachePaired(b, func(c cache, k string, _ int) int64 {
		v, _ := c.Get(k)
		return v
	})
}

// BenchmarkCacheGetOrSetRatio: GetOrSet of Zipf keys into a full cache,
// a read-through cache's call (a key it finds is a hit, one it does not is
// stored, evicting), against otter's SetIfAbsent, paired as above.
func BenchmarkCacheGetOrSetRatio(b *testing.B) {
	benchCachePaired(b, func(c cache, k string, i int) int64 {
		v, _ := c.(getOrSetter).GetOrSet(k, int64(i))
		return v
	})
}

func (c twochoiceCache) GetOrSet(k string, v int64) (int64, bool) { return c.s.GetOrSet(k, v) }

// GetOrSet is otter's SetIfAbsent, which reports whether it stored.
func (c otterCache) GetOrSet(k string, v int64) (int64, bool) {
	old, stored := c.c.SetIfAbsent(k, v)
	return old, !stored
}

// benchCachePaired runs op on full caches of each size in cacheFractions,
// twochoice paired with otter, on 1 and 2 goroutines.
func benchCachePaired(b *testing.B, op func(c cache, k string, i int) int64) {
	w := getWorkload(b)
	for _, f := range cacheFractions {
		// Built by the first sub-benchmark that needs them, as in
		// BenchmarkGetRatio: a run narrowed to one fraction does not
		// fill the other's caches (4M Sets each).
		var (
			once   sync.Once
			tc, ot cache
		)
		for _, g := range []int{1, 2} {
			b.Run(fmt.Sprintf("cache=1/%d/vs=otter/goroutines=%d", f, g), func(b *testing.B) {
				once.Do(func() { tc, ot = cachePeers(b, w, f) })
				if tc == nil {
					b.Fatal("the caches were not built (see the first sub-benchmark's failure)")
				}
				b.ReportAllocs()
				pairedOps(b, g, tc, ot, w, op)
			})
		}
	}
}

// settler is a cache that defers work to goroutines of its own (otter
// applies buffered writes and evicts on a maintenance goroutine): settle
// does the pending work now.
type settler interface{ settle() }

func (c otterCache) settle() { c.c.CleanUp() }

func settle(c any) {
	if s, ok := c.(settler); ok {
		s.settle()
	}
}

// pairedOps is pairedGoroutines for any operation: b.N calls of op on each
// of c and peer, on g goroutines, in alternating rounds. A cache that
// defers work (a settler) settles it at the end of each of its rounds,
// inside its own time: otherwise its maintenance goroutine would run
// during the other cache's round, taking a core from it and charging it
// with the work.
//
// It is generic in the key type for the integer-key benchmarks
// (intkeys_test.go); the string benchmarks instantiate it with string.
func pairedOps[K comparable](b *testing.B, g int, c, peer kcache[K], w workloadOf[K], op func(c kcache[K], k K, i int) int64) {
	pairedRounds(b, g, roundOps, c, peer, w, op)
}

// roundOps is the operations of one goroutine in one round of pairedOps:
// short enough that a noisy neighbour slows both sides of a pair alike.
const roundOps = 2048

// pairedRounds is pairedOps with rounds of chunk operations a goroutine.
func pairedRounds[K comparable](b *testing.B, g, pairedChunk int, c, peer kcache[K], w workloadOf[K], op func(c kcache[K], k K, i int) int64) {
	runtime.GC()
	type job struct {
		c    kcache[K]
		from int
	}
	jobs := make([]chan job, g)
	var done sync.WaitGroup
	for j := range jobs {
		jobs[j] = make(chan job)
		go func() {
			mask := len(w.seq) - 1
			var sum int64
			for jb := range jobs[j] {
				for i := jb.from; i < jb.from+pairedChunk; i++ {
					sum += op(jb.c, w.seq[i&mask], i)
				}
				done.Done()
			}
			sink.Add(sum)
		}()
	}
	run := func(c kcache[K], round int) time.Duration {
		t0 := time.Now()
		done.Add(g)
		for j := range jobs {
			jobs[j] <- job{c, j*1234567 + round*pairedChunk}
		}
		done.Wait()
		settle(c)
		return time.Since(t0)
	}
	// Long rounds shrink to a quarter of b.N, so that the testing
	// package's first small b.N stays small and every run alternates.
	if pairedChunk > roundOps {
		pairedChunk = max(roundOps, min(pairedChunk, b.N/(4*g)))
	}
	var tc, tp time.Duration
	rounds := (b.N + pairedChunk*g - 1) / (pairedChunk * g)
	b.ResetTimer()
	for r := range rounds {
		if r%2 == 0 {
			tc += run(c, r)
			tp += run(peer, r)
		} else {
			tp += run(peer, r)
			tc += run(c, r)
		}
	}
	b.StopTimer()
	for j := range jobs {
		close(jobs[j])
	}
	ops := float64(rounds * pairedChunk * g)
	b.ReportMetric(float64(tc.Nanoseconds())/ops, "ns/op")
	b.ReportMetric(float64(tp.Nanoseconds())/ops, "peer-ns/op")
	b.ReportMetric(float64(tc)/float64(tp), "x-peer")
}
