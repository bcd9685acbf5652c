package tier_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/redis/rueidis"

	"github.com/twochoice/twochoice/store/tier"
)

// Example reads a key twice through a near-cache: from the server, then
// from the near-cache. It needs a Redis server (6.0 or later) at
// $TIER_EXAMPLE_ADDR, or 127.0.0.1:6379; TestExample runs it against one
// it starts.
func Example() {
	addr := os.Getenv("TIER_EXAMPLE_ADDR")
	if addr == "" {
		addr = "127.0.0.1:6379"
	}
	ctx := context.Background()

	nc, err := tier.New(tier.Options{MaxBytes: 16 << 20})
	if err != nil {
		panic(err)
	}
	client, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:     []string{addr},
		NewCacheStoreFn: nc.NewCacheStore,
	})
	if err != nil {
		panic(err)
	}
	defer client.Close()

	if err := client.Do(ctx, client.B().Set().Key("greeting").Value("hello").Build()).Error(); err != nil {
		panic(err)
	}
	for range 2 {
		r := client.DoCache(ctx, client.B().Get().Key("greeting").Cache(), time.Minute)
		v, err := r.ToString()
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s (from the near-cache: %v)\n", v, r.IsCacheHit())
	}
	st := nc.Stats()
	fmt.Printf("hits %d, misses %d\n", st.Hits, st.Misses)
}
