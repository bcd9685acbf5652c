package storebench

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/maypok86/otter/v2"
	"github.com/twochoice/twochoice/internal/keyset"
	"github.com/twochoice/twochoice/internal/testutil"
	"github.com/twochoice/twochoice/store"
)

// cache is what the Get benchmarks need from each peer.
type cache = kcache[string]

// kcache is cache for any key type (the integer-key benchmarks use uint64).
type kcache[K comparable] interface {
	Get(k K) (int64, bool)
	Set(k K, v int64)
}

type twochoice struct{ s *store.Map[string, int64] }

func (c twochoice) Get(k string) (int64, bool) { return c.s.Get(k) }
func (c twochoice) Set(k string, v int64)      { c.s.Set(k, v) }

type twochoiceCache struct{ s *store.Cache[string, int64] }

func (c twochoiceCache) Get(k string) (int64, bool) { return c.s.Get(k) }
func (c twochoiceCache) Set(k string, v int64)      { c.s.Set(k, v) }

// lockedMap is the baseline: a Go map guarded by a sync.RWMutex.
type lockedMap struct {
	mu sync.RWMutex
	m  map[string]int64
}

func (c *lockedMap) Get(k string) (int64, bool) {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	return v, ok
}

func (c *lockedMap) Set(k string, v int64) {
	c.mu.Lock()
	c.m[k] = v
	c.mu.Unlock()
}

type otterCache struct{ c *otter.Cache[string, int64] }

func (c otterCache) Get(k string) (int64, bool) { return c.c.GetIfPresent(k) }
func (c otterCache) Set(k string, v int64)      { c.c.Set(k, v) }

// peers builds each cache, empty, sized for n keys where the cache needs a
// size (otter is a bounded cache; it gets room for all n).
var peers = []struct {
	name string
	make func(n int) cache
}{
	{"twochoice", func(int) cache {
		s, err := store.NewMap[string, int64](store.MapOptions{Seed: 1})
		if err != nil {
			panic(err)
		}
		return twochoice{s}
	}},
	{"rwmap", func(int) cache { return &lockedMap{m: make(map[string]int64)} }},
	{"otter", func(n int) cache {
		return otterCache{otter.Must(&otter.Options[string, int64]{MaximumSize: n + n/4, InitialCapacity: n})}
	}},
}

// workload is the Get benchmarks' data: n real-looking keys and a Zipf
// 1.0 access sequence over them (ranks shuffled onto keys, so the hot keys
// are not the first inserted).
type workload = workloadOf[string]

// workloadOf is workload for any key type: keys, an access sequence of
// indices into them, and that sequence as keys (seq[i] = keys[access[i]]).
//
// The timed loops read seq, in order, and not keys[access[i]]: looking a
// key up in a table of 1M keys is the benchmark's own work, not the
// caches', and with the index it is a cache miss on every operation (the
// key's header, at a random place in 16 MiB), 10.6% of all samples in a
// profile of BenchmarkCacheSetRatio, paid alike by both sides of a pair,
// which pulls every ratio towards 1. A program hands a cache the key it
// holds; the key's bytes are still wherever the generator put them, so
// hashing them still misses as it did.
type workloadOf[K any] struct {
	keys   []K
	access []int32
	seq    []K
}

// newWorkload returns the workload of keys and access, with its seq.
func newWorkload[K any](keys []K, access []int32) workloadOf[K] {
	seq := make([]K, len(access))
	for i, r := range access {
		seq[i] = keys[r]
	}
	return workloadOf[K]{keys, access, seq}
}

var (
	wlOnce sync.Once
	wl     workload
)

func getWorkload(b *testing.B) workload {
	wlOnce.Do(func() {
		n := 1 << 20
		if testing.Short() {
			n = 1 << 12
		}
		keys := keyset.Synthetic(n, 1)
		perm := rand.New(rand.NewPCG(2, 3)).Perm(n)
		access := Zipf(n, 1<<22, 1.0, 4)
		for i, r := range access {
			access[i] = int32(perm[r])
		}
		wl = newWorkload(keys, access)
	})
	return wl
}

var sink syncInt

type syncInt struct {
	mu sync.Mutex
	v  int64
}

func (s *syncInt) Add(v int64) { s.mu.Lock(); s.v += v; s.mu.Unlock() }

// setKeys returns the keys of the Set benchmarks: 10M, or 100K with -short.
var (
	setOnce sync.Once
	setKeys []string
)

func getSetKeys() []string {
	setOnce.Do(func() {
		n := 10_000_000
		if testing.Short() {
			n = 100_000
		}
		setKeys = keyset.Synthetic(n, 5)
	})
	return setKeys
}

// BenchmarkSetGrowing: Set of 10M new keys into an empty, growing store,
// against a Go map (no lock: one goroutine) and the RWMutex map. One op is
// all 10M keys; the metric ns/key is what to compare.
func BenchmarkSetGrowing(b *testing.B) {
	keys := getSetKeys()
	b.Run("twochoice", func(b *testing.B) {
		b.StopTimer()
		timeFills(b, len(keys), func() {
			s, _ := store.NewMap[string, int64](store.MapOptions{Seed: 1})
			for i, k := range keys {
				s.Set(k, int64(i))
			}
		})
	})
	b.Run("map", func(b *testing.B) {
		b.StopTimer()
		timeFills(b, len(keys), func() {
			m := make(map[string]int64)
			for i, k := range keys {
				m[k] = int64(i)
			}
		})
	})
	b.Run("rwmap", func(b *testing.B) {
		b.StopTimer()
		timeFills(b, len(keys), func() {
			m := &lockedMap{m: make(map[string]int64)}
			for i, k := range keys {
				m.Set(k, int64(i))
			}
		})
	})
}

// BenchmarkSetGrowingRatio: the twochoice and map fills of
// BenchmarkSetGrowing, alternated in one loop (testutil.PairedFill), with
// x-map, the store's time over the map's, as the figure to read. A shared
// machine drifts by as much as a quarter over the minutes that ten fills of
// each take, and BenchmarkSetGrowing does all the store's fills and then
// all the map's, so the ratio of its medians says as much about when each
// ran as about either; alternated fills see the same drift. Run it with
// -test.benchtime Nx for N pairs of fills.
//
// vs=mutexmap pairs the same fill with one of a Go map behind a
// sync.Mutex, what a program that sets from several goroutines would use
// instead: the store takes a bucket lock on every Set, the plain map
// nothing, and this says how much of x-map that is.
func BenchmarkSetGrowingRatio(b *testing.B) {
	keys := getSetKeys()
	fillStore := func() {
		s, _ := store.NewMap[string, int64](store.MapOptions{Seed: 1})
		for i, k := range keys {
			s.Set(k, int64(i))
		}
		runtime.KeepAlive(s)
	}
	b.Run("vs=map", func(b *testing.B) {
		testutil.PairedFill(b, len(keys), fillStore, func() {
			m := make(map[string]int64)
			for i, k := range keys {
				m[k] = int64(i)
			}
			runtime.KeepAlive(m)
		})
	})
	b.Run("vs=mutexmap", func(b *testing.B) {
		testutil.PairedFill(b, len(keys), fillStore, func() {
			m := &mutexMap{m: make(map[string]int64)}
			for i, k := range keys {
				m.Set(k, int64(i))
			}
			runtime.KeepAlive(m)
		})
	})
}

// timeFills times b.N calls of fill, each after a GC and with the timer
// stopped between them, and reports ns/key for n keys a call.
//
// One untimed fill comes first. The first fill in a process takes its
// memory fresh from the operating system and pays a page fault for every
// 4 KiB of it; later fills reuse the heap the earlier ones freed. Without
// the warm-up, whichever sub-benchmark ran first would pay those faults
// alone (about 1 GB for twochoice's 10M-key growing fill), and the ratio
// would depend on the order of the sub-benchmarks.
func timeFills(b *testing.B, n int, fill func()) {
	b.ReportAllocs()
	runtime.GC()
	fill()
	for range b.N {
		runtime.GC()
		b.StartTimer()
		fill()
		b.StopTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
}

// BenchmarkSetSized: the Sets of BenchmarkSetGrowing into a store created
// with MapOptions.SizeHint set to the number of keys, against a Go map made
// with the same hint: what a user who knows the size ahead pays, with no
// growth on either side. ns/key is what to compare.
func BenchmarkSetSized(b *testing.B) {
	keys := getSetKeys()
	b.Run("twochoice", func(b *testing.B) {
		b.StopTimer()
		timeFills(b, len(keys), func() {
			s, _ := store.NewMap[string, int64](store.MapOptions{Seed: 1, SizeHint: len(keys)})
			for i, k := range keys {
				s.Set(k, int64(i))
			}
		})
	})
	b.Run("map", func(b *testing.B) {
		b.StopTimer()
		timeFills(b, len(keys), func() {
			m := make(map[string]int64, len(keys))
			for i, k := range keys {
				m[k] = int64(i)
			}
		})
	})
}

// BenchmarkSetLatency times every Set while a store (and a Go map) grows
// from empty to 10M keys, and reports the worst and the tail. Timing each
// call adds about 40 ns to it; the worst case is what this is for.
func BenchmarkSetLatency(b *testing.B) {
	keys := getSetKeys()
	lat := make([]time.Duration, len(keys))
	report := func(b *testing.B) {
		slices.Sort(lat)
		q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Nanoseconds()) }
		b.ReportMetric(q(0.5), "p50-ns")
		b.ReportMetric(q(0.999), "p99.9-ns")
		b.ReportMetric(q(0.99999), "p99.999-ns")
		b.ReportMetric(float64(lat[len(lat)-1].Nanoseconds()), "max-ns")
	}
	b.Run("twochoice", func(b *testing.B) {
		for range b.N {
			s, _ := store.NewMap[string, int64](store.MapOptions{Seed: 1})
			for i, k := range keys {
				t0 := time.Now()
				s.Set(k, int64(i))
				lat[i] = time.Since(t0)
			}
		}
		report(b)
	})
	b.Run("map", func(b *testing.B) {
		for range b.N {
			m := make(map[string]int64)
			for i, k := range keys {
				t0 := time.Now()
				m[k] = int64(i)
				lat[i] = time.Since(t0)
			}
		}
		report(b)
	})
}

// BenchmarkMemory reports the heap bytes per entry of 1M string→int64
// entries (the keys are built before and not counted). One op builds one
// structure; the metric bytes/entry is what to compare.
func BenchmarkMemory(b *testing.B) {
	n := 1_000_000
	if testing.Short() {
		n = 10_000
	}
	keys := keyset.Synthetic(n, 6)
	measure := func(b *testing.B, build func() any) {
		var keep any
		var before, after runtime.MemStats
		for range b.N {
			keep = nil
			runtime.GC()
			runtime.ReadMemStats(&before)
			keep = build()
			runtime.GC()
			runtime.ReadMemStats(&after)
		}
		runtime.KeepAlive(keep)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "bytes/entry")
	}
	b.Run("twochoice", func(b *testing.B) {
		measure(b, func() any {
			s, _ := store.NewMap[string, int64](store.MapOptions{Seed: 1})
			for i, k := range keys {
				s.Set(k, int64(i))
			}
			return s
		})
	})
	b.Run("map", func(b *testing.B) {
		measure(b, func() any {
			m := make(map[string]int64)
			for i, k := range keys {
				m[k] = int64(i)
			}
			return m
		})
	})
	b.Run("otter", func(b *testing.B) {
		measure(b, func() any {
			c := otter.Must(&otter.Options[string, int64]{MaximumSize: n + n/4})
			for i, k := range keys {
				c.Set(k, int64(i))
			}
			return c
		})
	})
}
