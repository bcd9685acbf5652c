package measure

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/workload"
)

// The benchmarks compare every cache's Get and Set, on 1 and 2 goroutines,
// on the bench command's default workload: Zipf s = 1.0 over 1M keys, a
// cache of 100,000 entries (10% of the keys). ns/op is wall time per call
// over all goroutines: lower is better, and perfect scaling on 2
// goroutines halves it. Report them with benchstat over interleaved runs:
//
//	go test -c -o /tmp/measure.test ./bench/measure
//	for i in $(seq 10); do
//	  /tmp/measure.test -test.run '^$' -test.bench 'Get|Set' -test.count 1 >> caches.txt
//	done
//	go run golang.org/x/perf/cmd/benchstat@latest -col /goroutines caches.txt

var (
	benchOnce sync.Once
	benchReqs []workload.Request[uint64] // the Zipf stream every benchmark replays
)

// benchSizes returns the key count and capacity: 1M and 100,000, or 10,000
// and 1,000 with -short.
func benchSizes() (keys uint64, capacity int) {
	if testing.Short() {
		return 10_000, 1_000
	}
	return 1_000_000, 100_000
}

func benchStream(b *testing.B) []workload.Request[uint64] {
	benchOnce.Do(func() {
		keys, _ := benchSizes()
		z, err := workload.NewZipf(1.0, keys, 1)
		if err != nil {
			panic(err)
		}
		n := 1 << 22
		if testing.Short() {
			n = 1 << 16
		}
		benchReqs, _ = workload.Collect[uint64](z, n)
	})
	return benchReqs
}

// newWarm returns a peer's cache at the benchmark capacity after a
// cache-aside pass of 4 requests per entry (deferred work left to the
// cache, as users run it).
func newWarm(b *testing.B, p caches.Peer[uint64, Value]) caches.Cache[uint64, Value] {
	_, capacity := benchSizes()
	c, err := p.New(caches.Options{Capacity: capacity})
	if err != nil {
		b.Fatal(err)
	}
	reqs := benchStream(b)
	warm(c, Stream[uint64]{Reqs: reqs}, min(len(reqs), 4*capacity))
	runtime.GC()
	return c
}

// parallel runs body on g goroutines, g Ps, with b.RunParallel; each
// goroutine starts at its own place in the stream.
func parallel(b *testing.B, g int, body func(reqs []workload.Request[uint64], i int) int) {
	reqs := benchStream(b)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(g))
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1)) * 1_234_567 % len(reqs)
		for pb.Next() {
			i = body(reqs, i)
		}
	})
}

// forEach runs bench for every peer at 1 and 2 goroutines, making each
// peer's cache only when one of its benchmarks runs.
func forEach(b *testing.B, bench func(b *testing.B, c caches.Cache[uint64, Value], g int)) {
	for _, p := range caches.Peers[uint64, Value]() {
		var c caches.Cache[uint64, Value]
		for _, g := range []int{1, 2} {
			b.Run(fmt.Sprintf("cache=%s/goroutines=%d", p.Name, g), func(b *testing.B) {
				if c == nil {
					c = newWarm(b, p)
				}
				bench(b, c, g)
			})
		}
		if c != nil {
			c.Close()
		}
	}
}

// BenchmarkGet: Get of Zipf keys in a warm cache, hits and misses as they
// come (no Set on a miss).
func BenchmarkGet(b *testing.B) {
	forEach(b, func(b *testing.B, c caches.Cache[uint64, Value], g int) {
		parallel(b, g, func(reqs []workload.Request[uint64], i int) int {
			c.Get(reqs[i].Key) // an interface call: the compiler cannot drop it
			if i++; i == len(reqs) {
				i = 0
			}
			return i
		})
	})
}

// BenchmarkSet: Set of Zipf keys into a full cache; a bounded cache evicts
// for each new key (the keys outnumber the capacity tenfold), an unbounded
// one grows.
func BenchmarkSet(b *testing.B) {
	forEach(b, func(b *testing.B, c caches.Cache[uint64, Value], g int) {
		parallel(b, g, func(reqs []workload.Request[uint64], i int) int {
			c.Set(reqs[i].Key, value)
			if i++; i == len(reqs) {
				i = 0
			}
			return i
		})
	})
}
