package store_test

import (
	"fmt"

	"github.com/twochoice/twochoice/store"
)

// MaxWeight with a Weigher bounds a cache in bytes rather than entries:
// here at 1 KiB of values, whatever their sizes. MaxEntries still bounds
// the count; set it near what the weight allows.
func ExampleCacheOptions_maxWeight() {
	c, err := store.NewCache(store.CacheOptions[string, []byte]{
		MaxEntries: 64,
		MaxWeight:  1024,
		Weigher:    func(_ string, v []byte) uint32 { return uint32(len(v)) },
	})
	if err != nil {
		panic(err)
	}
	for i := range 100 {
		c.Set(fmt.Sprint("page", i), make([]byte, 100))
	}
	fmt.Println(c.Len(), "entries weighing", c.Weight(), "bytes")
	c.Set("huge", make([]byte, 2048)) // heavier than the bound: not stored
	_, ok := c.Get("huge")
	fmt.Println("huge stored:", ok)
	// Output:
	// 10 entries weighing 1000 bytes
	// huge stored: false
}
