package store

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/keyset"
	"github.com/twochoice/twochoice/internal/testutil"
)

var testSeed = flag.Uint64("store.seed", 0, "seed for randomized store tests (0: a fresh one, printed)")

// seedFor returns the seed of a randomized test and logs it, so a failure
// replays with -store.seed.
func seedFor(t testing.TB) uint64 {
	s := *testSeed
	if s == 0 {
		s = rand.Uint64()
	}
	t.Logf("seed %d (replay with -store.seed %d)", s, s)
	return s
}

// everyConfig lists an option set for each rule and family, with the
// usual d and a few unusual ones.
func everyConfig() []Options {
	var out []Options
	for _, rule := range bucket.Placements() {
		for _, kind := range hashfn.Kinds() {
			ds := []int{2, 3, 8}
			if rule == bucket.OneChoice {
				ds = []int{1}
			}
			for _, d := range ds {
				out = append(out, Options{Placement: rule, Choices: d, Hash: kind, Seed: 99})
			}
		}
	}
	return out
}

func name(o Options) string {
	if r, err := o.resolve(); err == nil {
		o = r
	}
	return fmt.Sprintf("%s-d%d-c%d-%s", o.Placement, o.Choices, o.BucketSize, o.Hash)
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want error
	}{
		{Options{MaxEntries: -1}, ErrOptions},
		{Options{MaxEntries: 1}, ErrOptions},           // below the 2 buckets of go-left
		{Options{MaxEntries: math.MaxInt}, ErrOptions}, // past the largest table: no panic
		{Options{MaxEntries: 1 << 40}, ErrOptions},     // nor an out-of-memory crash
		{Options{MaxEntries: 1<<35 + 1}, ErrOptions},   // one past 2^32 buckets of 8 (and MaxCacheEntries)
		{Options{MaxEntries: 1 << 34, BucketSize: 2}, ErrOptions},
		{Options{DefaultTTL: -1, MaxEntries: 10}, ErrOptions},
		{Options{Choices: 9}, ErrOptions},
		{Options{Choices: -1}, ErrOptions},
		{Options{Placement: bucket.Placement(17)}, ErrOptions},
		{Options{Placement: bucket.Halves, Choices: 9}, ErrOptions},
		{Options{BucketSize: 9}, ErrOptions},
		{Options{BucketSize: -2}, ErrOptions},
		{Options{Hash: hashfn.Kind(5)}, ErrOptions},
	} {
		s, err := New[string, int](tc.o)
		if !errors.Is(err, tc.want) || s != nil {
			t.Errorf("New(%+v) = %v, %v; want error %v", tc.o, s, err, tc.want)
		} else {
			t.Logf("%+v: %v", tc.o, err)
		}
	}
}

func TestZeroOptionsMeanDefaults(t *testing.T) {
	s := newTestMap[string, int](t, MapOptions{})
	o := s.options()
	if o.Placement != bucket.GoLeft || o.Choices != 2 || o.BucketSize != 8 || o.Hash != hashfn.XXHash || o.Seed == 0 {
		t.Fatalf("defaults: %+v", o)
	}
	if s.Seed() != o.Seed {
		t.Fatalf("Seed() = %d, options say %d", s.Seed(), o.Seed)
	}
	one := newTestMap[string, int](t, MapOptions{Choices: 1})
	if one.Options().Placement != bucket.OneChoice {
		t.Fatalf("Choices 1 with the zero placement should be one choice, got %v", one.Options().Placement)
	}
}

// TestAgainstMap runs the same random operations on a store and a map for
// every rule and family, through several growths.
func TestAgainstMap(t *testing.T) {
	seed := seedFor(t)
	n := 20000
	if testing.Short() {
		n = 4000
	}
	keys := keyset.Synthetic(n, seed)
	for _, o := range everyConfig() {
		t.Run(name(o), func(t *testing.T) {
			s := newTestStore[string, int](t, o)
			ref := map[string]int{}
			r := rand.New(rand.NewPCG(seed, 1))
			for i := range 4 * n {
				k := keys[r.IntN(len(keys))]
				switch r.IntN(10) {
				case 0, 1:
					delete(ref, k)
					s.Delete(k)
				case 2, 3, 4, 5:
					ref[k] = i
					s.Set(k, i)
				default:
					got, ok := s.Get(k)
					want, wok := ref[k]
					if ok != wok || got != want {
						t.Fatalf("Get(%q) = %d, %v; want %d, %v", k, got, ok, want, wok)
					}
				}
			}
			if s.Len() != len(ref) {
				t.Fatalf("Len = %d, want %d", s.Len(), len(ref))
			}
			st := s.Stats()
			if st.Grows == 0 || st.Gets != st.Hits+st.Misses || st.Gets == 0 {
				t.Fatalf("stats: %+v", st)
			}
		})
	}
}

// TestKeyTypes covers each way of hashing a key.
func TestKeyTypes(t *testing.T) {
	type name string
	type point struct{ X, Y int32 }
	t.Run("named string", func(t *testing.T) { roundTrip(t, func(i int) name { return name(fmt.Sprint("n", i)) }) })
	t.Run("int8", func(t *testing.T) { roundTrip(t, func(i int) int8 { return int8(i) }) })
	t.Run("uint16", func(t *testing.T) { roundTrip(t, func(i int) uint16 { return uint16(i) }) })
	t.Run("int32", func(t *testing.T) { roundTrip(t, func(i int) int32 { return int32(-i) }) })
	t.Run("int", func(t *testing.T) { roundTrip(t, func(i int) int { return i * 1000003 }) })
	t.Run("uintptr", func(t *testing.T) { roundTrip(t, func(i int) uintptr { return uintptr(i) }) })
	t.Run("[16]byte", func(t *testing.T) {
		roundTrip(t, func(i int) [16]byte { return [16]byte{byte(i), byte(i >> 8), 15: 1} })
	})
	t.Run("struct", func(t *testing.T) { roundTrip(t, func(i int) point { return point{int32(i), int32(i * 3)} }) })
	t.Run("float64", func(t *testing.T) { roundTrip(t, func(i int) float64 { return float64(i) / 3 }) })
	t.Run("any", func(t *testing.T) {
		roundTrip(t, func(i int) any {
			if i%2 == 0 {
				return i
			}
			return fmt.Sprint(i)
		})
	})
}

func roundTrip[K comparable](t *testing.T, key func(int) K) {
	for _, kind := range hashfn.Kinds() {
		s := newTestMap[K, int](t, MapOptions{Hash: kind, Seed: 3})
		n := 200
		for i := range n {
			s.Set(key(i), i)
		}
		if s.Len() != n {
			t.Fatalf("%s: Len = %d, want %d (keys collide?)", kind, s.Len(), n)
		}
		for i := range n {
			if v, ok := s.Get(key(i)); !ok || v != i {
				t.Fatalf("%s: Get(%v) = %d, %v", kind, key(i), v, ok)
			}
		}
	}
}

// TestKeysHashAsTheirFamily pins the cheap paths to the family's own
// functions: a string hashes as its bytes, an integer as its uint64.
func TestKeysHashAsTheirFamily(t *testing.T) {
	for _, kind := range hashfn.Kinds() {
		fn, _ := hashfn.New(kind, 77)
		if got, want := newHasher[string](fn)("hello"), fn.String("hello"); got != want {
			t.Errorf("%s string: %#x, want %#x", kind, got, want)
		}
		if got, want := newHasher[[3]byte](fn)([3]byte{1, 2, 3}), fn.Bytes([]byte{1, 2, 3}); got != want {
			t.Errorf("%s [3]byte: %#x, want %#x", kind, got, want)
		}
		if got, want := newHasher[uint64](fn)(1<<40+5), fn.Uint64(1<<40+5); got != want {
			t.Errorf("%s uint64: %#x, want %#x", kind, got, want)
		}
		if got, want := newHasher[int16](fn)(-1), fn.Uint64(0xffff); got != want {
			t.Errorf("%s int16: %#x, want %#x", kind, got, want)
		}
	}
}

// TestSameSeedSamePlacement: two stores with one seed and one sequence of
// operations hold every key in the same bucket and slot.
func TestSameSeedSamePlacement(t *testing.T) {
	testutil.SkipOneGoroutine(t, "two stores filled alike")
	keys := keyset.Synthetic(5000, 1)
	for _, o := range everyConfig() {
		a := newTestStore[string, int](t, o)
		b := newTestStore[string, int](t, o)
		for i, k := range keys {
			a.Set(k, i)
			b.Set(k, i)
		}
		ta, tb := currentTable(a), currentTable(b)
		if ta.geom().n != tb.geom().n {
			t.Fatalf("%s: sizes differ", name(o))
		}
		for i := range ta.geom().n {
			if ta.bucket(i).ctrl.Load() != tb.bucket(i).ctrl.Load() ||
				ta.bucket(i).slots != tb.bucket(i).slots {
				t.Fatalf("%s: bucket %d differs", name(o), i)
			}
		}
	}
	// And a different seed places them differently.
	a := newTestMap[string, int](t, MapOptions{Seed: 1})
	b := newTestMap[string, int](t, MapOptions{Seed: 2})
	for i, k := range keys {
		a.Set(k, i)
		b.Set(k, i)
	}
	if a.tabs.Load().cur.bucket(0).slots == b.tabs.Load().cur.bucket(0).slots {
		t.Fatal("seeds 1 and 2 fill bucket 0 alike")
	}
}

// TestHashCollisionsAreHarmless forces every key to one hash: the store
// must still tell them apart by comparing keys, and then re-key.
func TestHashCollisionsAreHarmless(t *testing.T) {
	s := newTestMap[string, int](t, MapOptions{Seed: 5})
	setHash(s, func(string) uint64 { return 0x1234567 })
	for i := range 100 {
		s.Set(fmt.Sprint(i), i)
	}
	for i := range 100 {
		if v, ok := s.Get(fmt.Sprint(i)); !ok || v != i {
			t.Fatalf("Get(%d) = %d, %v", i, v, ok)
		}
	}
	if _, ok := s.Get("absent"); ok {
		t.Fatal("found an absent key with a colliding hash")
	}
	for i := range 50 {
		if !s.Delete(fmt.Sprint(i)) {
			t.Fatalf("Delete(%d) = false", i)
		}
	}
	// 84 keys in the stash of a table that needs no growth for 100:
	// the store moves to a new hash function instead (flood.go).
	if st := s.Stats(); s.Len() != 50 || st.Rekeys == 0 || st.Grows > 1 {
		t.Fatalf("Len = %d, stats %+v", s.Len(), st)
	}
}

func TestStashHintsAndGrowthByStash(t *testing.T) {
	// One choice, one slot: the stash fills fast and forces growth.
	s := newTestMap[int, int](t, MapOptions{Choices: 1, BucketSize: 1, Seed: 11})
	deleted := map[int]bool{}
	for i := range 3000 {
		s.Set(i, -i)
		if i%97 == 0 {
			s.Delete(i / 2)
			deleted[i/2] = true
		}
	}
	st := s.Stats()
	if st.Grows == 0 {
		t.Fatalf("no growth: %+v", st)
	}
	for i := range 3000 {
		v, ok := s.Get(i)
		if ok == deleted[i] || (ok && v != -i) {
			t.Fatalf("Get(%d) = %d, %v (deleted %v)", i, v, ok, deleted[i])
		}
	}
}

func TestClear(t *testing.T) {
	s := newTestMap[string, int](t, MapOptions{Seed: 1})
	for i := range 10000 {
		s.Set(fmt.Sprint(i), i)
	}
	before := s.Stats()
	s.Clear()
	if s.Len() != 0 || s.Stats().Buckets >= before.Buckets {
		t.Fatalf("after Clear: Len %d, stats %+v", s.Len(), s.Stats())
	}
	if _, ok := s.Get("5"); ok {
		t.Fatal("found a key after Clear")
	}
	s.Set("5", 5)
	if v, _ := s.Get("5"); v != 5 || s.Len() != 1 {
		t.Fatal("store unusable after Clear")
	}
	if st := s.Stats(); st.Sets != before.Sets+1 {
		t.Fatalf("Clear reset the counters: %+v", st)
	}
}

func TestStatsCount(t *testing.T) {
	s := newTestMap[int, int](t, MapOptions{Seed: 1})
	for i := range 1000 {
		s.Set(i, i)
	}
	for i := range 3000 {
		s.Get(i) // 1000 hits, 2000 misses
	}
	s.Delete(1)
	s.Delete(-1)
	st := s.Stats()
	if st.Hits != 1000 || st.Misses != 2000 || st.Gets != 3000 || st.Sets != 1000 || st.Deletes != 1 || st.Entries != 999 {
		t.Fatalf("stats: %+v", st)
	}
	if r := st.HitRatio(); r < 0.333 || r > 0.334 {
		t.Fatalf("hit ratio %v", r)
	}
}

// TestCountersAreExact: hits and misses counted by many goroutines at
// once, in their stripes, add up exactly.
func TestCountersAreExact(t *testing.T) {
	s := newTestMap[int, int](t, MapOptions{Seed: 1})
	s.Set(1, 1)
	const goroutines, n = 8, 20000
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range n {
				s.Get(1)
				s.Get(2)
			}
		})
	}
	wg.Wait()
	if st := s.Stats(); st.Hits != goroutines*n || st.Misses != goroutines*n {
		t.Fatalf("stats after %d hits and misses: %+v", goroutines*n, st)
	}
}

func TestAllocs(t *testing.T) {
	if testing.CoverMode() != "" || testutil.Race {
		t.Skip("instrumented build")
	}
	keys := keyset.Synthetic(1000, 2)
	s := newTestMap[string, int64](t, MapOptions{Seed: 1})
	i := 0
	if a := testing.AllocsPerRun(1000, func() { s.Set(keys[i%len(keys)], int64(i)); i++ }); a != 0 {
		t.Errorf("Set of string keys: %v allocs", a)
	}
	if a := testing.AllocsPerRun(1000, func() { s.Get(keys[i%len(keys)]); i++ }); a != 0 {
		t.Errorf("Get of string keys: %v allocs", a)
	}
	if a := testing.AllocsPerRun(1000, func() { s.Get("absent"); i++ }); a != 0 {
		t.Errorf("Get of an absent key: %v allocs", a)
	}
	si := newTestMap[uint64, int](t, MapOptions{Hash: hashfn.Tabulation, Seed: 1})
	for j := range uint64(1000) {
		si.Set(j, 0)
	}
	if a := testing.AllocsPerRun(1000, func() { si.Set(uint64(i%1000), i); si.Get(uint64(i % 1000)); i++ }); a != 0 {
		t.Errorf("Set and Get of integer keys: %v allocs", a)
	}
}

// TestCand2MatchesGenerator: the two-choice fast path draws the same
// candidates as the generator, for every scheme and table sizes of every
// kind (odd, prime, power of two).
func TestCand2MatchesGenerator(t *testing.T) {
	r := rand.New(rand.NewPCG(seedFor(t), 9))
	for _, rule := range []bucket.Placement{bucket.DChoice, bucket.Halves, bucket.GoLeft, bucket.DoubleHash} {
		for _, n := range []uint64{2, 3, 4, 7, 8, 1000, 1024, 1031, 99991, 1 << 20, hashfn.MaxBuckets} {
			o := Options{Placement: rule, Choices: 2, BucketSize: 8}
			if rule.Scheme() == hashfn.Double && n&(n-1) != 0 && !hashfn.IsPrime(n) {
				continue
			}
			if rule.Scheme() == hashfn.Parts && n%2 != 0 {
				continue
			}
			gen, err := rule.Generator(n, 2)
			if err != nil {
				t.Fatal(err)
			}
			// Set up a table without its buckets: 2^32 of them would not
			// fit in memory, and cand2 does not read them.
			full := &table[int, int]{geometry: newGeometry(&o, n)}
			var c [hashfn.MaxChoices]uint64
			for range 2000 {
				h := r.Uint64()
				gen.Fill(h, c[:])
				if a, b := full.cand2(h); a != c[0] || b != c[1] {
					t.Fatalf("%s n=%d h=%#x: cand2 %d %d, Fill %d %d", rule, n, h, a, b, c[0], c[1])
				}
			}
		}
	}
}

// TestGrowthUsesPreparedTable: the next table is allocated a chunk per
// write only near the threshold, and the growth takes that table.
func TestGrowthUsesPreparedTable(t *testing.T) {
	s := newTestMap[int, int](t, MapOptions{Seed: 4})
	i := 0
	for s.tabs.Load().cur.n < 3*chunkSize { // big enough for several chunks
		s.Set(i, i)
		i++
	}
	for s.tabs.Load().old != nil {
		s.Set(i, i)
		i++
	}
	cur := s.tabs.Load().cur
	if s.prep != nil {
		t.Fatalf("next table prepared right after a growth, at %d of %d entries", cur.entries, cur.maxEntries)
	}
	var prepared *table[int, int]
	for s.tabs.Load().cur == cur {
		s.Set(i, i)
		i++
		if s.prep != nil {
			prepared = s.prep
			if s.prep.ready == 0 {
				t.Fatal("prepared table without a chunk")
			}
		}
	}
	if prepared == nil || s.tabs.Load().cur != prepared || prepared.ready != len(prepared.chunks) {
		t.Fatalf("growth did not take the prepared table (prepared %v)", prepared != nil)
	}
}
