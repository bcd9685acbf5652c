package tier

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/twochoice/twochoice/store/tier/internal/redistest"
)

// BenchmarkHit reads keys that are all cached, through rueidis's own
// near-cache and through a Tier: the cost of a hit, client included.
func BenchmarkHit(b *testing.B) {
	s := redistest.Start(b)
	ctx := context.Background()
	const most = 1 << 16
	keys := make([]string, most)
	w := newClient(b, []string{s.Addr}, nil, nil)
	for lo := 0; lo < most; lo += 1024 {
		cmds := make(rueidis.Commands, 0, 1024)
		for i := lo; i < lo+1024; i++ {
			keys[i] = "hit:" + strconv.Itoa(i)
			cmds = append(cmds, w.B().Set().Key(keys[i]).Value("0123456789").Build())
		}
		for _, r := range w.DoMulti(ctx, cmds...) {
			if err := r.Error(); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, n := range []int{1 << 10, most} {
		for _, name := range []string{"rueidis", "twochoice"} {
			b.Run(fmt.Sprintf("%s/keys=%d", name, n), func(b *testing.B) { benchmarkHit(b, s.Addr, name, keys[:n]) })
		}
	}
}

func benchmarkHit(b *testing.B, addr, name string, keys []string) {
	ctx := context.Background()
	n := len(keys)
	opt := rueidis.ClientOption{InitAddress: []string{addr}, PipelineMultiplex: -1}
	if name == "twochoice" {
		opt.NewCacheStoreFn = newTier(b, Options{MaxEntries: 4 * n}).NewCacheStore
	}
	c, err := rueidis.NewClient(opt)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for _, k := range keys {
		c.DoCache(ctx, c.B().Get().Key(k).Cache(), time.Hour)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if r := c.DoCache(ctx, c.B().Get().Key(keys[i&(n-1)]).Cache(), time.Hour); !r.IsCacheHit() {
				b.Fatal("a miss")
			}
			i++
		}
	})
}
