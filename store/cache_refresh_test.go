package store

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// refreshesDone waits until no load or refresh of s is in flight.
func refreshesDone[K comparable, V any](t *testing.T, s *Cache[K, V]) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		l := s.loadTable()
		l.mu.Lock()
		n := len(l.calls)
		l.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d loads still in flight", n)
		}
		time.Sleep(time.Millisecond)
	}
}

// newRefreshCache returns a cache that refreshes after a minute by a fake
// clock, with "k" loaded as "v1" two minutes ago.
func newRefreshCache(t *testing.T) (*Cache[string, string], *fakeClock) {
	clk := newFakeClock()
	s := newTestCache(t, CacheOptions[string, string]{MaxEntries: 100, Seed: 1, Clock: clk, RefreshAfter: time.Minute})
	v, err := s.GetOrLoad(context.Background(), "k", func(context.Context, string) (string, error) { return "v1", nil })
	if err != nil || v != "v1" {
		t.Fatalf("GetOrLoad = %q, %v", v, err)
	}
	clk.advance(2 * time.Minute)
	return s, clk
}

// blockingLoader returns a loader that counts its calls and returns v once
// release is closed, and a channel that receives a value when a call has
// started.
func blockingLoader(v string, err error, release chan struct{}) (func(context.Context, string) (string, error), *atomic.Int64, chan struct{}) {
	var calls atomic.Int64
	started := make(chan struct{}, 100)
	return func(context.Context, string) (string, error) {
		calls.Add(1)
		started <- struct{}{}
		<-release
		return v, err
	}, &calls, started
}

// A refresh serves the old value while the reload blocks, and the new one
// once it is stored; an entry refreshed since is not refreshed again
// before RefreshAfter.
func TestRefreshServesOldValue(t *testing.T) {
	s, clk := newRefreshCache(t)
	release := make(chan struct{})
	load, calls, started := blockingLoader("v2", nil, release)
	ctx := context.Background()
	for range 3 {
		if v, err := s.GetOrLoad(ctx, "k", load); v != "v1" || err != nil {
			t.Fatalf("during the refresh: GetOrLoad = %q, %v", v, err)
		}
	}
	<-started
	if v, _ := s.Get("k"); v != "v1" {
		t.Fatalf("during the refresh: Get = %q", v)
	}
	close(release)
	refreshesDone(t, s)
	if v, _ := s.Get("k"); v != "v2" {
		t.Fatalf("after the refresh: Get = %q", v)
	}
	if v, _ := s.GetOrLoad(ctx, "k", load); v != "v2" || calls.Load() != 1 {
		t.Fatalf("GetOrLoad = %q after %d loads; want v2 after one", v, calls.Load())
	}
	clk.advance(30 * time.Second)
	s.GetOrLoad(ctx, "k", load)
	refreshesDone(t, s)
	if calls.Load() != 1 {
		t.Errorf("a fresh entry was refreshed")
	}
	st := s.Stats()
	if st.Refreshes != 1 || st.RefreshFailures != 0 || st.Sets != 2 {
		t.Errorf("Stats %+v; want 1 refresh, 2 Sets", st)
	}
}

// One reload for 100 concurrent readers of an old entry.
func TestRefreshOncePerKey(t *testing.T) {
	s, _ := newRefreshCache(t)
	release := make(chan struct{})
	load, calls, _ := blockingLoader("v2", nil, release)
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			if v, err := s.GetOrLoad(context.Background(), "k", load); v != "v1" || err != nil {
				t.Errorf("GetOrLoad = %q, %v during the refresh", v, err)
			}
		})
	}
	wg.Wait()
	close(release)
	refreshesDone(t, s)
	if n := calls.Load(); n != 1 {
		t.Errorf("%d reloads for 100 readers, want 1", n)
	}
	if v, _ := s.Get("k"); v != "v2" {
		t.Errorf("Get = %q after the refresh", v)
	}
}

// A write or a delete of the key during the refresh wins over it.
func TestRefreshLosesToWrites(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(s *Cache[string, string])
		want  string
		found bool
	}{
		{"Set", func(s *Cache[string, string]) { s.Set("k", "mine") }, "mine", true},
		{"Delete", func(s *Cache[string, string]) { s.Delete("k") }, "", false},
		{"Compute", func(s *Cache[string, string]) {
			s.Compute("k", func(string, bool) (string, ComputeOp) { return "computed", ComputeSet })
		}, "computed", true},
		{"Delete and Set", func(s *Cache[string, string]) { s.Delete("k"); s.Set("k", "again") }, "again", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newRefreshCache(t)
			release := make(chan struct{})
			load, _, started := blockingLoader("v2", nil, release)
			s.GetOrLoad(context.Background(), "k", load)
			<-started
			tc.write(s)
			close(release)
			refreshesDone(t, s)
			if v, ok := s.Get("k"); v != tc.want || ok != tc.found {
				t.Errorf("Get = %q, %v; want %q, %v", v, ok, tc.want, tc.found)
			}
		})
	}
}

// A failed refresh keeps the old value, is counted, and a later hit tries
// again; a panicking loader is a failure, not a crash.
func TestRefreshFailure(t *testing.T) {
	s, _ := newRefreshCache(t)
	ctx := context.Background()
	errBackend := errors.New("backend down")
	fail := func(context.Context, string) (string, error) { return "", errBackend }
	s.GetOrLoad(ctx, "k", fail)
	refreshesDone(t, s)
	if v, ok := s.Get("k"); v != "v1" || !ok {
		t.Fatalf("after a failed refresh: Get = %q, %v", v, ok)
	}
	s.GetOrLoad(ctx, "k", func(context.Context, string) (string, error) { panic("loader bug") })
	refreshesDone(t, s)
	if v, ok := s.Get("k"); v != "v1" || !ok {
		t.Fatalf("after a panicked refresh: Get = %q, %v", v, ok)
	}
	if st := s.Stats(); st.Refreshes != 2 || st.RefreshFailures != 2 {
		t.Errorf("Stats %+v; want 2 refreshes, 2 failures", st)
	}
	s.GetOrLoad(ctx, "k", func(context.Context, string) (string, error) { return "v3", nil })
	refreshesDone(t, s)
	if v, _ := s.Get("k"); v != "v3" {
		t.Errorf("a refresh after failures: Get = %q", v)
	}
}

// A caller that misses the key while its refresh runs waits for the
// refresh instead of loading again; GetOrLoadAll refreshes its hits too.
func TestRefreshJoinedByMisses(t *testing.T) {
	s, clk := newRefreshCache(t)
	release := make(chan struct{})
	load, calls, started := blockingLoader("v2", nil, release)
	ctx := context.Background()
	s.GetOrLoad(ctx, "k", load)
	<-started
	// Evicted, say, during the refresh: gone, and the refresh's value is
	// not stored, but the miss gets it.
	s.Delete("k")
	waiting := make(chan struct{}, 1)
	testHookWait = func() { waiting <- struct{}{} }
	defer func() { testHookWait = nil }()
	got := make(chan string)
	go func() {
		v, _ := s.GetOrLoad(ctx, "k", load)
		got <- v
	}()
	<-waiting
	close(release)
	if v := <-got; v != "v2" || calls.Load() != 1 {
		t.Errorf("a miss during the refresh got %q after %d loads; want v2 after 1", v, calls.Load())
	}
	refreshesDone(t, s)

	s.Set("a", "old")
	clk.advance(2 * time.Minute)
	var bulk atomic.Int64
	m, err := s.GetOrLoadAll(ctx, []string{"a"}, func(_ context.Context, keys []string) (map[string]string, error) {
		bulk.Add(1)
		return map[string]string{"a": "new"}, nil
	})
	if err != nil || m["a"] != "old" {
		t.Fatalf("GetOrLoadAll = %v, %v", m, err)
	}
	refreshesDone(t, s)
	if v, _ := s.Get("a"); v != "new" || bulk.Load() != 1 {
		t.Errorf("after GetOrLoadAll's refresh: Get = %q after %d loads", v, bulk.Load())
	}
}

// The refresh's mark travels with the entry when the table grows while
// the refresh runs.
func TestRefreshAcrossGrowth(t *testing.T) {
	clk := newFakeClock()
	s := newTestCache(t, CacheOptions[int, int]{MaxEntries: 100_000, Seed: 2, Clock: clk, RefreshAfter: time.Minute})
	s.Set(0, 1)
	clk.advance(2 * time.Minute)
	release := make(chan struct{})
	started := make(chan struct{})
	ctx := context.Background()
	s.GetOrLoad(ctx, 0, func(context.Context, int) (int, error) {
		close(started)
		<-release
		return 2, nil
	})
	<-started
	n := s.tab.Load().n
	for i := 1; s.tab.Load().n == n; i++ {
		s.Set(i, i)
	}
	close(release)
	refreshesDone(t, s)
	if v, _ := s.Get(0); v != 2 {
		t.Errorf("after a growth during the refresh: Get = %d, want 2", v)
	}
}
