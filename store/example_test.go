package store_test

import (
	"fmt"
	"log"
	"slices"
	"time"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/store"
)

// The basics: the zero Options means go-left with two choices, buckets of
// 8 slots, seeded xxHash64 and a random seed.
func Example() {
	s, err := store.New[string, int](store.Options{})
	if err != nil {
		panic(err)
	}
	s.Set("apple", 1)
	s.Set("banana", 2)
	s.Set("apple", 3) // replaces

	v, ok := s.Get("apple")
	fmt.Println(v, ok)
	_, ok = s.Get("cherry")
	fmt.Println(ok)

	fmt.Println(s.Delete("banana"), s.Len())

	st := s.Stats()
	fmt.Println(st.Hits, st.Misses, st.Sets, st.Deletes)
	// Output:
	// 3 true
	// false
	// true 1
	// 1 1 3 1
}

// Options choose the rule, d, the bucket size, the hash family and the
// seed; a fixed seed places every key the same way in every run.
func ExampleNew() {
	s, err := store.New[uint64, string](store.Options{
		Placement:  bucket.DChoice,
		Choices:    3,
		BucketSize: 4,
		Seed:       42,
	})
	if err != nil {
		panic(err)
	}
	o := s.Options()
	fmt.Println(o.Placement, o.Choices, o.BucketSize, o.Hash, s.Seed())

	_, err = store.New[string, int](store.Options{Choices: 9})
	fmt.Println(err)
	// Output:
	// dchoice 3 4 xxhash 42
	// store: invalid options: bucket: bad placement: 9 choices (want 1 to 8)
}

// All iterates bucket by bucket; the loop may use the store.
func ExampleStore_All() {
	s, _ := store.New[string, int](store.Options{Seed: 1})
	for i, k := range []string{"a", "b", "c", "d"} {
		s.Set(k, i)
	}
	var keys []string
	for k, v := range s.All() {
		keys = append(keys, fmt.Sprint(k, "=", v))
		if k == "a" {
			s.Delete("a") // allowed during the loop
		}
	}
	slices.Sort(keys)
	fmt.Println(keys, s.Len())
	// Output:
	// [a=0 b=1 c=2 d=3] 3
}

// The load report: buckets by load, overall and per part, next to what the
// fluid limit predicts for the same rule, d and keys per bucket.
func ExampleStore_Load() {
	s, _ := store.New[int, int](store.Options{Seed: 7})
	for i := range 20000 {
		s.Set(i, i)
	}
	rep := s.Load()
	fmt.Println(rep.Entries, rep.Buckets, rep.MaxLoad, rep.Stash)
	fmt.Printf("%.3f %.3f\n", rep.ShareAtLeast[6], rep.FluidShareAtLeast[6])
	fmt.Print(rep)
	// Output:
	// 20000 3700 7 0
	// 0.501 0.503
	// 20000 entries in 3700 buckets of 8 slots (goleft, d = 2, xxhash, seed 7)
	// utilization 0.676 (grows at 0.80), mean load 5.405, max load 7, stash 0 (fluid limit 5.963e-08)
	//
	// load   buckets   share ≥ load   fluid limit        z
	//    0         0              1             1
	//    1         2              1             1      0.4
	//    2        11         0.9995        0.9994      0.0
	//    3        90         0.9965        0.9954      0.9
	//    4       403         0.9722        0.9724     -0.1
	//    5      1340         0.8632         0.863      0.0
	//    6      1584         0.5011        0.5028     -0.2
	//    7       270        0.07297       0.07212      0.2
	//    8         0              0     2.254e-04     -0.9
	//
	//           part 0 (fluid limit)  part 1 (fluid limit)
	// keys      52.41%                47.59%
	// mean load 5.666 (5.653)         5.144 (5.157)
	// ≥ 1       1 (1)                 1 (0.9999)
	// ≥ 2       1 (0.9997)            0.9989 (0.9992)
	// ≥ 3       0.9978 (0.9973)       0.9951 (0.9936)
	// ≥ 4       0.9865 (0.9832)       0.9578 (0.9615)
	// ≥ 5       0.9195 (0.9123)       0.807 (0.8137)
	// ≥ 6       0.6341 (0.633)        0.3681 (0.3727)
	// ≥ 7       0.1286 (0.1275)       0.0173 (0.01671)
	// ≥ 8       0 (4.498e-04)         0 (9.447e-07)
}

// A bounded cache: it never holds more than MaxEntries, every Set lands,
// and what made room is counted.
func Example_cache() {
	s, err := store.New[int, int](store.Options{MaxEntries: 1000, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	for i := range 5000 {
		s.Set(i, i)
	}
	v, ok := s.Get(4999) // the last Set is always there
	st := s.Stats()
	fmt.Println(v, ok, s.Len(), st.Evictions)
	// Output: 4999 true 1000 4000
}

// fixedClock is a clock that only moves when told to.
type fixedClock struct{ t time.Time }

func (c *fixedClock) Now() time.Time { return c.t }

// TTLs, with a clock the example controls.
func ExampleStore_SetWithTTL() {
	clock := &fixedClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s, err := store.New[string, string](store.Options{MaxEntries: 100, Clock: clock})
	if err != nil {
		log.Fatal(err)
	}
	s.SetWithTTL("session", "alice", time.Minute)
	s.Set("config", "v1") // no DefaultTTL: never expires
	clock.t = clock.t.Add(2 * time.Minute)
	_, ok := s.Get("session")
	fmt.Println(ok, s.Len(), s.Stats().Expirations)
	// Output: false 1 1
}

// GetOrSet stores a value only if the key has none, in one step: of
// goroutines racing to fill the same key, one stores and the others get
// its value.
func ExampleStore_GetOrSet() {
	s, err := store.New[string, int](store.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.GetOrSet("apple", 1))
	fmt.Println(s.GetOrSet("apple", 2))
	// Output:
	// 1 false
	// 1 true
}

// A store that will hold about a million keys can be sized for them up
// front, as make's hint sizes a map: the Sets up to the hint then move no
// keys from table to table.
func ExampleOptions_sizeHint() {
	s, err := store.New[int, int](store.Options{SizeHint: 1_000_000, Seed: 1})
	if err != nil {
		panic(err)
	}
	for i := range 1_000_000 {
		s.Set(i, i)
	}
	fmt.Println(s.Len(), s.Stats().Grows)
	// Output:
	// 1000000 0
}
