package store_test

import (
	"fmt"

	"github.com/twochoice/twochoice/store"
)

// OnDeletion hears of every entry that leaves the cache, and why: to close
// a connection an entry holds, or to count evictions by cause.
func ExampleCacheOptions_onDeletion() {
	c, err := store.NewCache(store.CacheOptions[string, int]{
		MaxEntries: 1000,
		OnDeletion: func(ev store.DeletionEvent[string, int]) {
			fmt.Println(ev.Key, ev.Value, ev.Cause)
		},
	})
	if err != nil {
		panic(err)
	}
	c.Set("a", 1)
	c.Set("a", 2)
	c.Delete("a")
	// Output:
	// a 1 replaced
	// a 2 deleted
}
