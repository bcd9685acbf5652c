package store_test

import (
	"fmt"

	"github.com/twochoice/twochoice/store"
)

// A cache's eviction policy adapts to the workload as it runs, and
// Policy says where it stands and how it got there. Here a loop over
// twice the cache's capacity, where LRU would hit nothing: the cache
// keeps part of the loop, and its miniatures show which rankings do.
// Relocation is tried from the first evidence on; the moves to "due" and
// then "due, last gap" restart the relocating twin from those rankings'
// miniatures, and relocation stays on.
func ExampleCache_Policy() {
	c, err := store.NewCache[int, int](store.CacheOptions[int, int]{MaxEntries: 1000, Seed: 1})
	if err != nil {
		panic(err)
	}
	for i := range 100_000 {
		k := i % 2000
		if _, ok := c.Get(k); !ok {
			c.Set(k, i)
		}
	}
	fmt.Printf("hit ratio %.0f%%\n", 100*c.Stats().HitRatio())
	p := c.Policy()
	for _, m := range p.Miniatures {
		fmt.Printf("%-17s %3.0f%%\n", m.Ranking, 100*m.HitRatio)
	}
	fmt.Println("in use:", p.Ranking, p.Prior)
	for _, ch := range p.Changes {
		trial := ""
		if ch.Trial {
			trial = " (trial)"
		}
		fmt.Printf("at Get %d: %s %s → %s%s\n", ch.Gets, ch.Kind, ch.From, ch.To, trial)
	}
	// Output:
	// hit ratio 48%
	// due                47%
	// due-last-gap       47%
	// frequency           2%
	// recency-frequency   1%
	// recency             0%
	// patient            46%
	// recency-no-window   2%
	// probation           0%
	// probation-window    0%
	// in use: due-last-gap short
	// at Get 126: relocation off → on (trial)
	// at Get 4309: ranking patient → due
	// at Get 4529: ranking due → due-last-gap
}
