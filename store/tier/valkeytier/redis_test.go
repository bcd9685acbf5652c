package valkeytier

import (
	"context"
	"testing"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/twochoice/twochoice/store/tier/internal/redistest"
)

// TestRoundTrip reads through the near-cache of a valkey-go client: a
// miss, a hit, an invalidation after another client's write, and a
// server killed and restarted while a reply is cached.
func TestRoundTrip(t *testing.T) {
	s := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	ctx := context.Background()
	tr, err := New(Options{MaxEntries: 1024})
	if err != nil {
		t.Fatal(err)
	}
	pushed := make(chan struct{}, 16)
	c, err := valkey.NewClient(valkey.ClientOption{
		InitAddress:     []string{s.Addr},
		NewCacheStoreFn: tr.NewCacheStore,
		OnInvalidations: func([]valkey.ValkeyMessage) { pushed <- struct{}{} },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{s.Addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	set := func(v string) {
		t.Helper()
		var err error
		for range 50 { // the first command after a restart may meet the dead connection
			if err = w.Do(ctx, w.B().Set().Key("k").Value(v).Build()).Error(); err == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatal(err)
	}
	get := func() (string, bool) {
		t.Helper()
		var err error
		for range 50 {
			r := c.DoCache(ctx, c.B().Get().Key("k").Cache(), time.Minute)
			var v string
			if v, err = r.ToString(); err == nil {
				return v, r.IsCacheHit()
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatal(err)
		return "", false
	}
	set("v1")
	if v, hit := get(); v != "v1" || hit {
		t.Fatalf("first read: %q, hit %v", v, hit)
	}
	if v, hit := get(); v != "v1" || !hit {
		t.Fatalf("second read: %q, hit %v", v, hit)
	}
	set("v2")
	select {
	case <-pushed:
	case <-time.After(10 * time.Second):
		t.Fatal("no invalidation in 10 s")
	}
	if v, hit := get(); v != "v2" || hit {
		t.Fatalf("read after the invalidation: %q, hit %v", v, hit)
	}
	if v, hit := get(); v != "v2" || !hit {
		t.Fatalf("second read of v2: %q, hit %v", v, hit)
	}
	s.Kill()
	s.Restart()
	set("v3")
	if v, _ := get(); v != "v3" {
		t.Fatalf("read after the restart: %q, want v3", v)
	}
	st := tr.Stats()
	if st.Closes == 0 || st.Invalidations == 0 || st.Hits < 2 {
		t.Fatalf("stats: %+v", st)
	}
	if pxat.Broken() {
		t.Error("the near-cache could not rewrite a reply's expiry: has valkey-go's CacheMarshal layout changed?")
	}
	t.Logf("%+v", st)
}
