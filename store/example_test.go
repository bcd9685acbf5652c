package store_test

import (
	"fmt"
	"log"
	"slices"
	"time"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/store"
)

// The basics: a Map grows as keys arrive. The zero MapOptions means
// go-left with two choices, buckets of 8 slots, seeded xxHash64 and a
// random seed.
func Example() {
	s, err := store.NewMap[string, int](store.MapOptions{})
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
func ExampleNewMap() {
	s, err := store.NewMap[uint64, string](store.MapOptions{
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

	_, err = store.NewMap[string, int](store.MapOptions{Choices: 9})
	fmt.Println(err)
	// Output:
	// dchoice 3 4 xxhash 42
	// store: invalid options: bucket: bad placement: 9 choices (want 1 to 8)
}

// All iterates bucket by bucket; the loop may use the map.
func ExampleMap_All() {
	s, _ := store.NewMap[string, int](store.MapOptions{Seed: 1})
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
func ExampleMap_Report() {
	s, _ := store.NewMap[int, int](store.MapOptions{Seed: 7})
	for i := range 20000 {
		s.Set(i, i)
	}
	rep := s.Report()
	fmt.Println(rep.Entries, rep.Buckets, rep.MaxLoad, rep.Stash)
	fmt.Printf("%.3f %.3f\n", rep.ShareAtLeast[6], rep.FluidShareAtLeast[6])
	fmt.Print(rep)
	// Output:
	// 20000 4096 7 0
	// 0.236 0.238
	// 20000 entries in 4096 buckets of 8 slots (goleft, d = 2, xxhash, seed 7)
	// utilization 0.610 (grows at 0.80), mean load 4.883, max load 7, stash 0 (fluid limit 8.846e-16)
	//
	// load   buckets   share ≥ load   fluid limit        z
	//    0         0              1             1
	//    1         7              1        0.9999      0.7
	//    2        43         0.9983        0.9985     -0.4
	//    3       212         0.9878        0.9887     -0.5
	//    4       888          0.936        0.9355      0.1
	//    5      1979         0.7192        0.7147      0.6
	//    6       945         0.2361        0.2381     -0.3
	//    7        22       0.005371       0.00739     -1.5
	//    8         0              0     3.064e-07     -0.0
	//
	//           part 0 (fluid limit)  part 1 (fluid limit)
	// keys      52.54%                47.46%
	// mean load 5.131 (5.132)         4.635 (4.633)
	// ≥ 1       1 (0.9999)            1 (0.9998)
	// ≥ 2       0.9985 (0.9992)       0.998 (0.9979)
	// ≥ 3       0.9937 (0.9933)       0.9819 (0.984)
	// ≥ 4       0.9629 (0.9602)       0.9092 (0.9108)
	// ≥ 5       0.8081 (0.8071)       0.6304 (0.6223)
	// ≥ 6       0.3574 (0.3583)       0.1147 (0.1179)
	// ≥ 7       0.01025 (0.01443)     4.883e-04 (3.482e-04)
	// ≥ 8       0 (6.127e-07)         0 (1.571e-11)
}

// A Cache never holds more than MaxEntries, every Set lands, and what
// made room is counted.
func ExampleNewCache() {
	s, err := store.NewCache(store.CacheOptions[int, int]{MaxEntries: 1000, Seed: 1})
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
func ExampleCache_SetWithTTL() {
	clock := &fixedClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s, err := store.NewCache(store.CacheOptions[string, string]{MaxEntries: 100, Clock: clock})
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
func ExampleMap_GetOrSet() {
	s, err := store.NewMap[string, int](store.MapOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.GetOrSet("apple", 1))
	fmt.Println(s.GetOrSet("apple", 2))
	// Output:
	// 1 false
	// 1 true
}

// A map that will hold about 100,000 keys can be sized for them up front,
// as make's hint sizes a Go map: the Sets up to the hint then move no keys
// from table to table.
func ExampleMapOptions_sizeHint() {
	s, err := store.NewMap[int, int](store.MapOptions{SizeHint: 100_000, Seed: 1})
	if err != nil {
		panic(err)
	}
	for i := range 100_000 {
		s.Set(i, i)
	}
	fmt.Println(s.Len(), s.Stats().Grows)
	// Output:
	// 100000 0
}
