package store_test

import (
	"fmt"

	"github.com/twochoice/twochoice/store"
)

// Compute reads and changes a key's entry in one atomic step: here a
// counter that no concurrent increment can lose, removed when it reaches
// zero. SetIfAbsent, ComputeIfAbsent and ComputeIfPresent are its thin
// forms.
func ExampleCache_Compute() {
	c, err := store.NewCache(store.CacheOptions[string, int]{MaxEntries: 1000})
	if err != nil {
		panic(err)
	}
	add := func(k string, d int) (int, bool) {
		return c.Compute(k, func(old int, found bool) (int, store.ComputeOp) {
			if old+d == 0 {
				return 0, store.ComputeDelete
			}
			return old + d, store.ComputeSet
		})
	}
	fmt.Println(add("visits", 1))
	fmt.Println(add("visits", 2))
	fmt.Println(add("visits", -3))

	fmt.Println(c.SetIfAbsent("owner", 7), c.SetIfAbsent("owner", 8))
	fmt.Println(c.ComputeIfPresent("owner", func(old int) (int, bool) { return old * 10, true }))
	// Output:
	// 1 true
	// 3 true
	// 0 false
	// true false
	// 70 true
}
