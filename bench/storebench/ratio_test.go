package storebench

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/maypok86/otter/v2"
	"github.com/twochoice/twochoice/internal/keyset"
	"github.com/twochoice/twochoice/store"
)

// The map's ratio benchmarks: Get and Set of present keys on an unbounded
// twochoice Map against a Go map behind a lock (and, for Get, otter), on
// the key sets and sizes users have, run two ways.
//
// Key sets: "real" is keyset.Debian (package names, home page URLs and
// archive paths, 2 to 206 bytes, median 23; past its 101,453 keys, the
// same with "/1", "/2" … suffixes), "synthetic" is keyset.Synthetic (ids,
// URLs and object names of 4 to 60 bytes). Sizes: 64k, 1M and 4M keys (4k
// with -short). Accesses: Zipf 1.0 over the keys, ranks shuffled onto
// them.
//
// Runs: "steady" alternates the two sides in rounds of 2^20 operations a
// goroutine, long enough that each side runs with the caches of the CPU
// full of its own data, as a program that uses one structure does;
// "rounds" alternates rounds of 2,048 operations, where each round starts
// with the lines the other side left behind (a program that uses the
// structure between other work). Both pair the sides in one loop so that
// a noisy neighbour slows both alike; x-peer is the store's time over the
// peer's (below 1 is faster) and ns/op is wall time per operation over all
// goroutines, so the 1- and 2-goroutine ns/op of one side give its
// scaling.
//
//	go test -c -o /tmp/storebench.test ./bench/storebench
//	/tmp/storebench.test -test.run '^$' -test.bench 'GetRatio/keys=real/n=1M' -test.count 10 > get.txt
//	benchstat -col /run get.txt
//
// BenchmarkGetLoop is the plain form: one structure at a time in a loop,
// named peer=…, for benchstat -col /peer.

// keySet is a named way to build n distinct keys.
type keySet struct {
	name string
	keys func(n int) []string
}

var keySets = []keySet{
	{"real", func(n int) []string { return keyset.Debian(n, 11) }},
	{"synthetic", func(n int) []string { return keyset.Synthetic(n, 1) }},
}

type tableSize struct {
	name string
	n    int
}

func tableSizes() []tableSize {
	if testing.Short() {
		return []tableSize{{"4k", 1 << 12}}
	}
	return []tableSize{{"64k", 1 << 16}, {"1M", 1 << 20}, {"4M", 1 << 22}}
}

// runKinds are the two ways of alternating the sides, by the operations
// of one goroutine in one round.
var runKinds = []struct {
	name  string
	chunk int
}{
	{"steady", 1 << 20},
	{"rounds", roundOps},
}

// mutexMap is a Go map behind a sync.Mutex: the baseline of the Set
// benchmarks, where every operation writes.
type mutexMap struct {
	mu sync.Mutex
	m  map[string]int64
}

func (c *mutexMap) Get(k string) (int64, bool) {
	c.mu.Lock()
	v, ok := c.m[k]
	c.mu.Unlock()
	return v, ok
}

func (c *mutexMap) Set(k string, v int64) {
	c.mu.Lock()
	c.m[k] = v
	c.mu.Unlock()
}

// getOrSetter is a structure with sync.Map's LoadOrStore: the value k has,
// or v stored for it.
type getOrSetter interface {
	GetOrSet(k string, v int64) (int64, bool)
}

func (c twochoice) GetOrSet(k string, v int64) (int64, bool) { return c.s.GetOrSet(k, v) }

// GetOrSet looks under the read lock first, as a program that mostly
// finds its keys does, and stores under the write lock, looking again.
func (c *lockedMap) GetOrSet(k string, v int64) (int64, bool) {
	c.mu.RLock()
	old, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return old, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[k]; ok {
		return old, true
	}
	c.m[k] = v
	return v, false
}

// syncMap is a sync.Map, the standard library's map for keys that are
// written once and read many times.
type syncMap struct{ m sync.Map }

func (c *syncMap) Get(k string) (int64, bool) {
	v, ok := c.m.Load(k)
	if !ok {
		return 0, false
	}
	return v.(int64), true
}

func (c *syncMap) Set(k string, v int64) { c.m.Store(k, v) }

func (c *syncMap) GetOrSet(k string, v int64) (int64, bool) {
	old, ok := c.m.LoadOrStore(k, v)
	return old.(int64), ok
}

// ratioPeers builds each structure empty, sized for n keys where it needs a
// size.
var ratioPeers = map[string]func(n int) cache{
	"twochoice": func(int) cache {
		s, err := store.NewMap[string, int64](store.MapOptions{Seed: 1})
		if err != nil {
			panic(err)
		}
		return twochoice{s}
	},
	"rwmap":    func(int) cache { return &lockedMap{m: make(map[string]int64)} },
	"mutexmap": func(int) cache { return &mutexMap{m: make(map[string]int64)} },
	"syncmap":  func(int) cache { return &syncMap{} },
	"otter": func(n int) cache {
		return otterCache{otter.Must(&otter.Options[string, int64]{MaximumSize: n + n/4, InitialCapacity: n})}
	},
}

// keyWorkload returns n keys of ks and a Zipf 1.0 sequence of accesses over
// them: 2^22 accesses (2^16 with -short), or n if that is more.
func keyWorkload(ks keySet, n int) workload {
	keys := ks.keys(n)
	count := 1 << 22
	if testing.Short() {
		count = 1 << 16
	}
	count = max(count, n)
	perm := rand.New(rand.NewPCG(2, 3)).Perm(n)
	access := Zipf(n, count, 1.0, 4)
	for i, r := range access {
		access[i] = int32(perm[r])
	}
	return newWorkload(keys, access)
}

// keyGroup is the data of one key set at one size: its workload and each
// structure, full, built when a sub-benchmark first needs it and dropped
// when the benchmarks of the group are done.
type keyGroup struct {
	b     *testing.B
	ks    keySet
	n     int
	w     *workload
	built map[string]cache
}

func (kg *keyGroup) workload() workload {
	if kg.w == nil {
		w := keyWorkload(kg.ks, kg.n)
		kg.w = &w
	}
	return *kg.w
}

func (kg *keyGroup) full(name string) cache {
	if c, ok := kg.built[name]; ok {
		return c
	}
	w := kg.workload()
	c := ratioPeers[name](len(w.keys))
	for i, k := range w.keys {
		c.Set(k, int64(i))
	}
	settle(c)
	kg.built[name] = c
	return c
}

// eachGroup calls run for every key set and size, and lets the group's
// data go afterwards.
func eachGroup(b *testing.B, run func(kg *keyGroup, prefix string)) {
	for _, ks := range keySets {
		for _, sz := range tableSizes() {
			kg := &keyGroup{b: b, ks: ks, n: sz.n, built: map[string]cache{}}
			run(kg, fmt.Sprintf("keys=%s/n=%s", ks.name, sz.name))
			kg.w, kg.built = nil, nil
			runtime.GC()
		}
	}
}

// ratioBench runs op on a full twochoice Map paired with each peer, both
// ways of alternating, on 1 and 2 goroutines.
func ratioBench(b *testing.B, peers []string, op func(c cache, k string, i int) int64) {
	eachGroup(b, func(kg *keyGroup, prefix string) {
		for _, rk := range runKinds {
			for _, p := range peers {
				for _, g := range []int{1, 2} {
					b.Run(fmt.Sprintf("%s/run=%s/vs=%s/goroutines=%d", prefix, rk.name, p, g), func(b *testing.B) {
						b.ReportAllocs()
						pairedRounds(b, g, rk.chunk, kg.full("twochoice"), kg.full(p), kg.workload(), op)
					})
				}
			}
		}
	})
}

// getPresent is a Get of a key the structure holds.
func getPresent(c cache, k string, _ int) int64 {
	v, ok := c.Get(k)
	if !ok {
		panic("missing key " + k)
	}
	return v
}

// BenchmarkGetRatio: Get of present keys, twochoice's Map against a Go
// map behind a sync.RWMutex and against otter (sized to hold every key).
func BenchmarkGetRatio(b *testing.B) {
	ratioBench(b, []string{"rwmap", "otter"}, getPresent)
}

// BenchmarkSetRatio: Set of present keys (updates), twochoice's Map
// against a Go map behind a sync.Mutex. A Map's updates hold only the
// bucket of their key, so its 2-goroutine ns/op falls below its
// 1-goroutine one where the map's cannot.
func BenchmarkSetRatio(b *testing.B) {
	ratioBench(b, []string{"mutexmap"}, func(c cache, k string, i int) int64 {
		c.Set(k, int64(i))
		return 0
	})
}

// BenchmarkGetOrSetRatio: GetOrSet of present keys, the common case of
// a LoadOrStore (a program that fills a map on first use and then mostly
// finds its keys), twochoice's Map against a Go map behind a
// sync.RWMutex that looks under the read lock first, and sync.Map's
// LoadOrStore. sync.Map boxes each value it is given, so the allocations
// reported against it are its own (twochoice's are 0: store.TestAllocs).
func BenchmarkGetOrSetRatio(b *testing.B) {
	ratioBench(b, []string{"rwmap", "syncmap"}, func(c cache, k string, i int) int64 {
		v, ok := c.(getOrSetter).GetOrSet(k, int64(i))
		if !ok {
			panic("missing key " + k)
		}
		return v
	})
}

// BenchmarkGetLoop: the Gets of BenchmarkGetRatio as plain loops, one
// structure at a time, each goroutine starting at its own place in the
// access sequence.
func BenchmarkGetLoop(b *testing.B) {
	eachGroup(b, func(kg *keyGroup, prefix string) {
		for _, p := range []string{"twochoice", "rwmap"} {
			for _, g := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/peer=%s/goroutines=%d", prefix, p, g), func(b *testing.B) {
					c, w := kg.full(p), kg.workload()
					b.ReportAllocs()
					loopGoroutines(b, g, func(from, to int) {
						mask := len(w.seq) - 1
						var sum int64
						for i := from; i < to; i++ {
							sum += getPresent(c, w.seq[i&mask], i)
						}
						sink.Add(sum)
					})
				})
			}
		}
	})
}

// loopGoroutines splits b.N operations over g goroutines, each starting at
// a different place in the access sequence, and times them together.
func loopGoroutines(b *testing.B, g int, work func(from, to int)) {
	// Collect the garbage of the set-up first, so that no structure is
	// timed while the collector finishes building another's.
	runtime.GC()
	var wg sync.WaitGroup
	start := make(chan struct{})
	per := b.N / g
	for j := range g {
		n := per
		if j == 0 {
			n += b.N - per*g
		}
		wg.Go(func() {
			<-start
			from := j * 1234567
			work(from, from+n)
		})
	}
	b.ResetTimer()
	close(start)
	wg.Wait()
}
