package store

import (
	"flag"
	"fmt"
	"math/rand/v2"
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

// TestAgainstMap runs the same random operations on a store and a map for
// every rule and family, through several growths.
func TestAgainstMap(t *testing.T) {
	t.Parallel() // one goroutine of CPU work: it overlaps the other such tests
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
				*ta.bucket(i).slots != *tb.bucket(i).slots {
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
	if *a.tabs.Load().cur.bucket(0).slots == *b.tabs.Load().cur.bucket(0).slots {
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
	if a := testing.AllocsPerRun(1000, func() { s.GetOrSet(keys[i%len(keys)], int64(i)); i++ }); a != 0 {
		t.Errorf("GetOrSet of a present key: %v allocs", a)
	}
	si := newTestMap[uint64, int](t, MapOptions{Hash: hashfn.Tabulation, Seed: 1})
	for j := range uint64(1000) {
		si.Set(j, 0)
	}
	if a := testing.AllocsPerRun(1000, func() { si.Set(uint64(i%1000), i); si.Get(uint64(i % 1000)); i++ }); a != 0 {
		t.Errorf("Set and Get of integer keys: %v allocs", a)
	}
}
