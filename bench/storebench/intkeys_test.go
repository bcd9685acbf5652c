package storebench

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/testutil"
	"github.com/twochoice/twochoice/store"
)

// The integer-key benchmarks: a Map[uint64, int64] with each hash
// family, hashfn.XXHash (the default) and hashfn.Tabulation (simple
// tabulation, which takes a 64-bit key directly), against a Go map of
// uint64 keys: Get against the RWMutex map, Set into a growing table
// against the plain map.
//
// The keys are sequential ids, 1 … n, inserted in a shuffled order: the
// integer keys stores most often hold (row ids, user ids, counters), and
// the structured case for a hash, only the low 20 bits varying. Random
// 64-bit keys would be kinder to both families; on keys like these simple
// tabulation's buckets stray further from the average than a random
// function's (see hashfn.Tab), which may cost it an earlier growth.
//
//	go test -c -o /tmp/storebench.test ./bench/storebench
//	flock /tmp/twochoice-bench.lock /tmp/storebench.test -test.run '^$' \
//	  -test.bench 'IntGetRatio|IntSetGrowingRatio' -test.count 10 > int.txt
//	go run golang.org/x/perf/cmd/benchstat@latest int.txt

// intStore is a Map[uint64, int64] as a kcache.
type intStore struct{ s *store.Map[uint64, int64] }

func (c intStore) Get(k uint64) (int64, bool) { return c.s.Get(k) }
func (c intStore) Set(k uint64, v int64)      { c.s.Set(k, v) }

// lockedIntMap is lockedMap with uint64 keys. It is a type of its own,
// not lockedMap made generic, so that nothing done for integer keys can
// change the code the string keys' ratios are measured against.
type lockedIntMap struct {
	mu sync.RWMutex
	m  map[uint64]int64
}

func (c *lockedIntMap) Get(k uint64) (int64, bool) {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	return v, ok
}

func (c *lockedIntMap) Set(k uint64, v int64) {
	c.mu.Lock()
	c.m[k] = v
	c.mu.Unlock()
}

// intHashes are the families the integer-key benchmarks run the store with.
var intHashes = []hashfn.Kind{hashfn.XXHash, hashfn.Tabulation}

func newIntStore(h hashfn.Kind) *store.Map[uint64, int64] {
	s, err := store.NewMap[uint64, int64](store.MapOptions{Seed: 1, Hash: h})
	if err != nil {
		panic(err)
	}
	return s
}

// intIDs returns the ids 1 … n in a shuffled order, seeded.
func intIDs(n int) []uint64 {
	ids := make([]uint64, n)
	for i, p := range rand.New(rand.NewPCG(7, 8)).Perm(n) {
		ids[i] = uint64(p) + 1
	}
	return ids
}

var (
	intWlOnce sync.Once
	intWl     workloadOf[uint64]
)

// getIntWorkload returns the integer-key Get workload: as many ids as the
// string workload has keys (2^20; 4096 with -short), in insertion order,
// and that workload's Zipf 1.0 access sequence over them.
func getIntWorkload(b *testing.B) workloadOf[uint64] {
	w := getWorkload(b)
	intWlOnce.Do(func() {
		intWl = newWorkload(intIDs(len(w.keys)), w.access)
	})
	return intWl
}

// BenchmarkIntGetRatio: Get of present uint64 keys, the store with each
// hash family paired against the RWMutex map[uint64]int64 as in
// BenchmarkGetRatio, on 1 and 2 goroutines; x-peer below 1 is faster.
func BenchmarkIntGetRatio(b *testing.B) {
	w := getIntWorkload(b)
	fill := func(c kcache[uint64]) kcache[uint64] {
		for i, k := range w.keys {
			c.Set(k, int64(i))
		}
		return c
	}
	// Each built by the first sub-benchmark that needs it, as in
	// BenchmarkGetRatio.
	rw := sync.OnceValue(func() kcache[uint64] {
		return fill(&lockedIntMap{m: make(map[uint64]int64)})
	})
	for _, h := range intHashes {
		tc := sync.OnceValue(func() kcache[uint64] { return fill(intStore{newIntStore(h)}) })
		for _, g := range []int{1, 2} {
			b.Run(fmt.Sprintf("hash=%s/vs=rwmap/goroutines=%d", h, g), func(b *testing.B) {
				b.ReportAllocs()
				pairedOps(b, g, tc(), rw(), w, func(c kcache[uint64], k uint64, _ int) int64 {
					v, ok := c.Get(k)
					if !ok {
						panic("missing key")
					}
					return v
				})
			})
		}
	}
}

// BenchmarkIntSetGrowingRatio fills an empty store (with each hash family)
// and an empty map[uint64]int64, no lock, with 2^20 new ids (20,000 with
// -short) in alternating order, each fill timed on its own, as the store
// package's BenchmarkSetGrowingPaired does for strings: ns/key is the
// store's, map-ns/key the map's, x-map the store's time over the map's.
func BenchmarkIntSetGrowingRatio(b *testing.B) {
	n := 1 << 20
	if testing.Short() {
		n = 20_000
	}
	ids := intIDs(n)
	for _, h := range intHashes {
		b.Run(fmt.Sprintf("hash=%s/vs=map", h), func(b *testing.B) {
			fillStore := func() {
				s := newIntStore(h)
				for i, k := range ids {
					s.Set(k, int64(i))
				}
				runtime.KeepAlive(s)
			}
			fillMap := func() {
				m := make(map[uint64]int64)
				for i, k := range ids {
					m[k] = int64(i)
				}
				runtime.KeepAlive(m)
			}
			testutil.PairedFill(b, n, fillStore, fillMap)
		})
	}
}
