package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/twochoice/twochoice/store"
)

// GetOrLoad loads a missing key through the loader, once for all the
// goroutines that miss it together; the value is then stored, and hits
// do not call the loader.
func ExampleCache_GetOrLoad() {
	c, err := store.NewCache(store.CacheOptions[string, string]{MaxEntries: 1000})
	if err != nil {
		panic(err)
	}
	var mu sync.Mutex
	calls := 0
	fetch := func(_ context.Context, user string) (string, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		return strings.ToUpper(user), nil // a database query, say
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if _, err := c.GetOrLoad(context.Background(), "ada", fetch); err != nil {
				panic(err)
			}
		})
	}
	wg.Wait()
	v, err := c.GetOrLoad(context.Background(), "ada", fetch)
	fmt.Println(v, err, calls)
	// Output:
	// ADA <nil> 1
}

// GetOrLoadAll loads the missing keys of a batch with one call of the
// loader; a key the loader does not find is absent from the result.
func ExampleCache_GetOrLoadAll() {
	c, err := store.NewCache(store.CacheOptions[int, string]{MaxEntries: 1000})
	if err != nil {
		panic(err)
	}
	c.Set(1, "one")
	fetch := func(_ context.Context, ids []int) (map[int]string, error) {
		fmt.Println("loading", ids)
		names := map[int]string{2: "two", 3: "three"}
		out := make(map[int]string)
		for _, id := range ids {
			if n, ok := names[id]; ok {
				out[id] = n
			}
		}
		return out, nil
	}
	m, err := c.GetOrLoadAll(context.Background(), []int{1, 2, 3, 4}, fetch)
	fmt.Println(m, err)
	// Output:
	// loading [2 3 4]
	// map[1:one 2:two 3:three] <nil>
}
