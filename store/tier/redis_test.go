package tier

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/twochoice/twochoice/store/tier/internal/redistest"
)

// invalidations collects the keys a client's server invalidated, for tests
// that wait for one.
type invalidations struct {
	mu   sync.Mutex
	keys map[string]int
	all  int
	ch   chan struct{} // closed and replaced at each invalidation
}

func newInvalidations() *invalidations {
	return &invalidations{keys: map[string]int{}, ch: make(chan struct{})}
}

func (iv *invalidations) on(keys []rueidis.RedisMessage) {
	iv.mu.Lock()
	if keys == nil {
		iv.all++
	}
	for i := range keys {
		k, _ := keys[i].ToString()
		iv.keys[k]++
	}
	close(iv.ch)
	iv.ch = make(chan struct{})
	iv.mu.Unlock()
}

// wait waits until key (or all keys, for "") has been invalidated more
// than n times, and returns the count.
func (iv *invalidations) wait(t testing.TB, key string, n int) int {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		iv.mu.Lock()
		got, ch := iv.keys[key], iv.ch
		if key == "" {
			got = iv.all
		}
		iv.mu.Unlock()
		if got > n {
			return got
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no invalidation of %q in 10 s", key)
		}
	}
}

func (iv *invalidations) count(key string) int {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	return iv.keys[key]
}

// newClient returns a rueidis client of addrs whose near-cache is tr (nil:
// no local cache at all), and stops it when the test ends.
func newClient(t testing.TB, addrs []string, tr *Tier, onInv func([]rueidis.RedisMessage)) rueidis.Client {
	t.Helper()
	opt := rueidis.ClientOption{
		InitAddress:       addrs,
		OnInvalidations:   onInv,
		PipelineMultiplex: -1, // one connection per server: tests fence it
	}
	if tr == nil {
		opt.DisableCache = true
	} else {
		opt.NewCacheStoreFn = tr.NewCacheStore
	}
	c, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatalf("rueidis.NewClient: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func newTier(t testing.TB, o Options) *Tier {
	t.Helper()
	tr, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestRoundTrip reads through the near-cache of a standalone server: a
// miss, then hits, an invalidation after another client's write, the
// server's TTL, and FLUSHALL.
func TestRoundTrip(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	tr := newTier(t, Options{MaxEntries: 1024})
	iv := newInvalidations()
	c := newClient(t, []string{s.Addr}, tr, iv.on)
	w := newClient(t, []string{s.Addr}, nil, nil)

	get := func(key string) (string, bool) {
		t.Helper()
		r := c.DoCache(ctx, c.B().Get().Key(key).Cache(), time.Minute)
		v, err := r.ToString()
		if err != nil && !rueidis.IsRedisNil(err) {
			t.Fatalf("GET %s: %v", key, err)
		}
		return v, r.IsCacheHit()
	}
	if err := w.Do(ctx, w.B().Set().Key("k").Value("v1").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if v, hit := get("k"); v != "v1" || hit {
		t.Fatalf("first read: %q, hit %v; want v1 from the server", v, hit)
	}
	for range 3 {
		if v, hit := get("k"); v != "v1" || !hit {
			t.Fatalf("second read: %q, hit %v; want v1 from the near-cache", v, hit)
		}
	}
	seen := iv.count("k")
	if err := w.Do(ctx, w.B().Set().Key("k").Value("v2").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	iv.wait(t, "k", seen)
	if v, hit := get("k"); v != "v2" || hit {
		t.Fatalf("read after the invalidation: %q, hit %v; want v2 from the server", v, hit)
	}

	// The server's expiry comes first when it is sooner than the read's.
	if err := w.Do(ctx, w.B().Set().Key("short").Value("x").Px(400*time.Millisecond).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	get("short")
	r := c.DoCache(ctx, c.B().Get().Key("short").Cache(), time.Minute)
	m, err := r.ToMessage()
	if err != nil || !r.IsCacheHit() {
		t.Fatalf("second read of short: %v, hit %v", err, r.IsCacheHit())
	}
	if left := time.Duration(m.CachePTTL()) * time.Millisecond; left <= 0 || left > 400*time.Millisecond {
		t.Fatalf("the hit's TTL is %v, want the server's, at most 400ms", left)
	}
	time.Sleep(time.Duration(m.CachePTTL()+20) * time.Millisecond)
	if v, hit := get("short"); v != "" || hit {
		t.Fatalf("read after the server's expiry: %q, hit %v; want nil from the server", v, hit)
	}

	// FLUSHALL invalidates every key of every tracking connection.
	get("k")
	if _, hit := get("k"); !hit {
		t.Fatal("k is not cached before FLUSHALL")
	}
	flushes := tr.Stats().Flushes
	if err := w.Do(ctx, w.B().Flushall().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	iv.wait(t, "", 0)
	if v, hit := get("k"); v != "" || hit {
		t.Fatalf("read after FLUSHALL: %q, hit %v; want nil from the server", v, hit)
	}
	st := tr.Stats()
	if st.Flushes <= flushes || st.Invalidations == 0 || st.Hits < 5 {
		t.Fatalf("stats after the round trip: %+v", st)
	}
	t.Logf("%+v", st)
}

// TestReplyKinds checks that a hit returns the same reply as the server,
// for each kind of reply: the near-cache rewrites a reply's expiry (see
// near.PXATWriter) and must change nothing else.
func TestReplyKinds(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	tr := newTier(t, Options{MaxEntries: 1024})
	c := newClient(t, []string{s.Addr}, tr, nil)
	w := newClient(t, []string{s.Addr}, nil, nil)
	for _, cmd := range []rueidis.Completed{
		w.B().Set().Key("str").Value("hello").Build(),
		w.B().Set().Key("empty").Value("").Build(),
		w.B().Hset().Key("hash").FieldValue().FieldValue("f1", "v1").FieldValue("f2", "v2").Build(),
		w.B().Sadd().Key("set").Member("a", "b", "c").Build(),
		w.B().Zadd().Key("zset").ScoreMember().ScoreMember(1.5, "x").ScoreMember(-2, "y").Build(),
		w.B().Rpush().Key("list").Element("1", "2", "3").Build(),
	} {
		if err := w.Do(ctx, cmd).Error(); err != nil {
			t.Fatal(err)
		}
	}
	// rueidis recycles a command once it has run: each read builds its own.
	for name, cmd := range map[string]func() rueidis.Cacheable{
		"string":      func() rueidis.Cacheable { return c.B().Get().Key("str").Cache() },
		"empty":       func() rueidis.Cacheable { return c.B().Get().Key("empty").Cache() },
		"nil":         func() rueidis.Cacheable { return c.B().Get().Key("nothing").Cache() },
		"map":         func() rueidis.Cacheable { return c.B().Hgetall().Key("hash").Cache() },
		"hash-field":  func() rueidis.Cacheable { return c.B().Hget().Key("hash").Field("f2").Cache() },
		"set":         func() rueidis.Cacheable { return c.B().Smembers().Key("set").Cache() },
		"zset-scores": func() rueidis.Cacheable { return c.B().Zrange().Key("zset").Min("0").Max("-1").Withscores().Cache() },
		"double":      func() rueidis.Cacheable { return c.B().Zscore().Key("zset").Member("x").Cache() },
		"list":        func() rueidis.Cacheable { return c.B().Lrange().Key("list").Start(0).Stop(-1).Cache() },
		"integer":     func() rueidis.Cacheable { return c.B().Strlen().Key("str").Cache() },
		"hash-empty":  func() rueidis.Cacheable { return c.B().Hgetall().Key("nothing").Cache() },
	} {
		ref := cmd()
		direct, err := w.Do(ctx, w.B().Arbitrary(ref.Commands()...).Build()).ToMessage()
		if err != nil && !rueidis.IsRedisNil(err) {
			t.Fatalf("%s: %v", name, err)
		}
		c.DoCache(ctx, cmd(), time.Minute)
		r := c.DoCache(ctx, cmd(), time.Minute)
		hit, err := r.ToMessage()
		if err != nil && !rueidis.IsRedisNil(err) {
			t.Fatalf("%s: %v", name, err)
		}
		if !r.IsCacheHit() {
			t.Errorf("%s: the second read missed", name)
		}
		if got, want := withoutTTL(hit.String()), direct.String(); got != want {
			t.Errorf("%s: the hit is %s, the server said %s", name, got, want)
		}
		if ttl := hit.CachePTTL(); ttl <= 0 || ttl > time.Minute.Milliseconds() {
			t.Errorf("%s: the hit's TTL is %d ms, want at most the read's minute", name, ttl)
		}
	}
	if pxat.Broken() {
		t.Error("the near-cache could not rewrite a reply's expiry: has rueidis's CacheMarshal layout changed?")
	}
}

// withoutTTL removes the client-side expiry from a reply's String.
func withoutTTL(s string) string { return ttlField.ReplaceAllString(s, "") }

var ttlField = regexp.MustCompile(`,"TTL":"[^"]*"`)

// TestServerRestart kills the server while a client has replies cached,
// and restarts it from its append-only file while another client writes:
// the lost connection must have dropped every reply, since the server no
// longer tracks them and will send no invalidation.
func TestServerRestart(t *testing.T) {
	s := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	ctx := context.Background()
	tr := newTier(t, Options{MaxEntries: 1024})
	c := newClient(t, []string{s.Addr}, tr, nil)
	w := newClient(t, []string{s.Addr}, nil, nil)
	const n = 50
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "restart:" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		if err := w.Do(ctx, w.B().Set().Key(keys[i]).Value("before").Build()).Error(); err != nil {
			t.Fatal(err)
		}
		c.DoCache(ctx, c.B().Get().Key(keys[i]).Cache(), time.Hour)
	}
	for _, k := range keys {
		if r := c.DoCache(ctx, c.B().Get().Key(k).Cache(), time.Hour); !r.IsCacheHit() {
			t.Fatalf("%s is not cached before the kill", k)
		}
	}
	s.Kill()
	s.Restart()
	if v := s.MustCmd("GET", keys[0]); v != "before" {
		t.Fatalf("the restarted server lost its data: GET %s = %q", keys[0], v)
	}
	for _, k := range keys { // the writer reconnects by itself
		var err error
		for range 50 {
			if err = w.Do(ctx, w.B().Set().Key(k).Value("after").Build()).Error(); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("writing after the restart: %v", err)
		}
	}
	stale := 0
	for _, k := range keys {
		var v string
		var err error
		for range 50 { // the reader's first command may meet the dead connection
			if v, err = c.DoCache(ctx, c.B().Get().Key(k).Cache(), time.Hour).ToString(); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("reading after the restart: %v", err)
		}
		if v != "after" {
			stale++
		}
	}
	st := tr.Stats()
	t.Logf("%d keys cached before the kill; after the restart %d stale reads; %+v", n, stale, st)
	if stale != 0 {
		t.Fatalf("%d of %d reads after the restart returned the value from before it", stale, n)
	}
	if st.Closes == 0 {
		t.Fatalf("the near-cache saw no connection close: %+v", st)
	}
}
