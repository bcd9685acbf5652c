package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// The loader runs exactly once for 1,000 goroutines that miss one key,
// and every one of them gets its value.
func TestGetOrLoadOnce(t *testing.T) {
	s := newTestCache(t, CacheOptions[string, int]{MaxEntries: 1000, Seed: 1})
	const n = 1000
	var calls atomic.Int32
	var started sync.WaitGroup
	started.Add(n)
	load := func(_ context.Context, k string) (int, error) {
		calls.Add(1)
		started.Wait() // every goroutine has asked (it waits, or finds the value)
		return len(k), nil
	}
	var wg sync.WaitGroup
	var wrong atomic.Int32
	for range n {
		wg.Go(func() {
			started.Done()
			v, err := s.GetOrLoad(context.Background(), "hello", load)
			if v != 5 || err != nil {
				wrong.Add(1)
			}
		})
	}
	wg.Wait()
	if c := calls.Load(); c != 1 || wrong.Load() != 0 {
		t.Fatalf("the loader ran %d times for %d goroutines; %d got a wrong result", c, n, wrong.Load())
	}
	if v, ok := s.Get("hello"); !ok || v != 5 {
		t.Errorf("after the load: Get = %d, %v", v, ok)
	}
	if len(s.lds.Load().calls) != 0 {
		t.Errorf("%d loads left in flight", len(s.lds.Load().calls))
	}
}

// An error goes to the loader's caller and every waiter, and is not
// cached: the next miss loads again.
func TestGetOrLoadError(t *testing.T) {
	s := newTestCache(t, CacheOptions[string, int]{MaxEntries: 100, Seed: 2})
	boom := errors.New("boom")
	release := make(chan struct{})
	var calls atomic.Int32
	load := func(context.Context, string) (int, error) {
		calls.Add(1)
		<-release
		return 0, boom
	}
	waiting := make(chan struct{}, 1)
	testHookWait = func() { waiting <- struct{}{} }
	defer func() { testHookWait = nil }()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { _, errs[0] = s.GetOrLoad(context.Background(), "k", load) })
	for s.loadTable().inFlight("k") == nil {
		runtime.Gosched()
	}
	wg.Go(func() { _, errs[1] = s.GetOrLoad(context.Background(), "k", load) })
	<-waiting
	close(release)
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, boom) {
			t.Errorf("caller %d: %v, want the loader's error", i, err)
		}
	}
	if _, ok := s.Get("k"); ok || calls.Load() != 1 {
		t.Fatalf("after a failed load: cached %v, %d loads", ok, calls.Load())
	}
	v, err := s.GetOrLoad(context.Background(), "k", func(context.Context, string) (int, error) { return 7, nil })
	if v != 7 || err != nil {
		t.Errorf("the next miss: %d, %v; want a fresh load", v, err)
	}
}

// A panic in the loader reaches the goroutine that ran it, unchanged; a
// waiter gets ErrLoadPanicked; and the key can be loaded again.
func TestGetOrLoadPanic(t *testing.T) {
	s := newTestCache(t, CacheOptions[string, int]{MaxEntries: 100, Seed: 3})
	release := make(chan struct{})
	waiting := make(chan struct{}, 1)
	testHookWait = func() { waiting <- struct{}{} }
	defer func() { testHookWait = nil }()
	var recovered any
	var wg sync.WaitGroup
	wg.Go(func() {
		defer func() { recovered = recover() }()
		s.GetOrLoad(context.Background(), "k", func(context.Context, string) (int, error) {
			<-release
			panic("loader bug")
		})
	})
	for s.loadTable().inFlight("k") == nil {
		runtime.Gosched()
	}
	var werr error
	wg.Go(func() {
		_, werr = s.GetOrLoad(context.Background(), "k", func(context.Context, string) (int, error) {
			t.Error("the waiter ran its loader")
			return 0, nil
		})
	})
	<-waiting
	close(release)
	wg.Wait()
	if recovered != "loader bug" {
		t.Errorf("the loader's caller recovered %v, want the loader's panic", recovered)
	}
	if !errors.Is(werr, ErrLoadPanicked) {
		t.Errorf("the waiter got %v, want ErrLoadPanicked", werr)
	}
	if v, err := s.GetOrLoad(context.Background(), "k", func(context.Context, string) (int, error) { return 1, nil }); v != 1 || err != nil {
		t.Errorf("after the panic: %d, %v", v, err)
	}
}

// A waiter whose context ends returns its error at once; the load goes
// on and its caller gets the value.
func TestGetOrLoadWaiterCancelled(t *testing.T) {
	s := newTestCache(t, CacheOptions[string, int]{MaxEntries: 100, Seed: 4})
	release := make(chan struct{})
	var wg sync.WaitGroup
	var v int
	var err error
	wg.Go(func() {
		v, err = s.GetOrLoad(context.Background(), "k", func(context.Context, string) (int, error) {
			<-release
			return 9, nil
		})
	})
	for s.loadTable().inFlight("k") == nil {
		runtime.Gosched()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, werr := s.GetOrLoad(ctx, "k", nil); !errors.Is(werr, context.Canceled) {
		t.Errorf("a cancelled waiter got %v", werr)
	}
	close(release)
	wg.Wait()
	if v != 9 || err != nil {
		t.Errorf("the loader's caller got %d, %v", v, err)
	}
}

// GetOrLoadAll returns the stored keys, waits for the keys another caller
// is loading, and loads the rest in one call, once each; a key the loader
// leaves out is absent, and its waiter gets ErrNotLoaded.
func TestGetOrLoadAll(t *testing.T) {
	s := newTestCache(t, CacheOptions[string, int]{MaxEntries: 1000, Seed: 5})
	s.Set("a", 1)
	s.Set("b", 2)
	release := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		s.GetOrLoad(context.Background(), "c", func(context.Context, string) (int, error) {
			<-release
			return 3, nil
		})
	})
	for s.loadTable().inFlight("c") == nil {
		runtime.Gosched()
	}
	waiting := make(chan struct{}, 2)
	testHookWait = func() { waiting <- struct{}{} }
	defer func() { testHookWait = nil }()
	var asked [][]string
	var got map[string]int
	var err error
	wg.Go(func() {
		got, err = s.GetOrLoadAll(context.Background(), []string{"a", "x", "c", "b", "y", "x", "gone"},
			func(_ context.Context, keys []string) (map[string]int, error) {
				asked = append(asked, slices.Clone(keys))
				m := map[string]int{"unasked": 0}
				for _, k := range keys {
					if k != "gone" {
						m[k] = len(k) * 10
					}
				}
				return m, nil
			})
	})
	<-waiting // the bulk caller has loaded x, y, gone and waits for c
	close(release)
	wg.Wait()
	want := map[string]int{"a": 1, "b": 2, "c": 3, "x": 10, "y": 10}
	if err != nil || !maps.Equal(got, want) {
		t.Errorf("GetOrLoadAll = %v, %v; want %v", got, err, want)
	}
	if len(asked) != 1 || !slices.Equal(asked[0], []string{"x", "y", "gone"}) {
		t.Errorf("the loader was asked %v; want once, for x, y, gone", asked)
	}
	for k, v := range want {
		if g, ok := s.Get(k); !ok || g != v {
			t.Errorf("after the load: Get(%s) = %d, %v", k, g, ok)
		}
	}
	if _, ok := s.Get("unasked"); ok {
		t.Error("a key the loader was not asked for was stored")
	}
}

// A waiter on a key that a bulk load leaves out gets ErrNotLoaded; an
// error of the bulk loader reaches its waiters.
func TestGetOrLoadAllWaiters(t *testing.T) {
	s := newTestCache(t, CacheOptions[string, int]{MaxEntries: 1000, Seed: 6})
	for _, fail := range []bool{false, true} {
		boom := errors.New("boom")
		release := make(chan struct{})
		var wg sync.WaitGroup
		var berr error
		wg.Go(func() {
			_, berr = s.GetOrLoadAll(context.Background(), []string{"p", "q"}, func(context.Context, []string) (map[string]int, error) {
				<-release
				if fail {
					return nil, boom
				}
				return map[string]int{"p": 1}, nil
			})
		})
		for s.loadTable().inFlight("q") == nil {
			runtime.Gosched()
		}
		waiting := make(chan struct{}, 1)
		testHookWait = func() { waiting <- struct{}{} }
		var werr error
		wg.Go(func() { _, werr = s.GetOrLoad(context.Background(), "q", nil) })
		<-waiting
		testHookWait = nil
		close(release)
		wg.Wait()
		if fail && (!errors.Is(werr, boom) || !errors.Is(berr, boom)) || !fail && (!errors.Is(werr, ErrNotLoaded) || berr != nil) {
			t.Errorf("bulk loader failing %v: the bulk caller got %v, the waiter %v", fail, berr, werr)
		}
		s.Clear()
	}
}

// Many goroutines load overlapping keys, single and in bulk, against a
// loader that counts its calls per key: each key is loaded once while it
// stays stored, and every result is the key's value.
func TestGetOrLoadConcurrent(t *testing.T) {
	s := newTestCache(t, CacheOptions[int, string]{MaxEntries: 10_000, Seed: 7})
	var loaded [500]atomic.Int32
	one := func(_ context.Context, k int) (string, error) {
		loaded[k].Add(1)
		return fmt.Sprint(k), nil
	}
	bulk := func(_ context.Context, keys []int) (map[int]string, error) {
		m := make(map[int]string, len(keys))
		for _, k := range keys {
			loaded[k].Add(1)
			m[k] = fmt.Sprint(k)
		}
		return m, nil
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				k := (i*7 + g*13) % len(loaded)
				if i%3 == 0 {
					keys := []int{k, (k + 1) % len(loaded), (k + 2) % len(loaded)}
					m, err := s.GetOrLoadAll(context.Background(), keys, bulk)
					for _, x := range keys {
						if err != nil || m[x] != fmt.Sprint(x) {
							t.Errorf("GetOrLoadAll(%v) = %v, %v", keys, m, err)
							return
						}
					}
					continue
				}
				if v, err := s.GetOrLoad(context.Background(), k, one); err != nil || v != fmt.Sprint(k) {
					t.Errorf("GetOrLoad(%d) = %q, %v", k, v, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for k := range loaded {
		if n := loaded[k].Load(); n != 1 {
			t.Errorf("key %d loaded %d times", k, n)
		}
	}
}

// inFlight returns the load in flight for k, if any.
func (l *loads[K, V]) inFlight(k K) *loadCall[V] {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls[k]
}

// A call whose first look misses a key that is stored before its second
// look (here by a Set between the two; in a busy cache, by a relocation
// that the first look raced) returns the stored value without a load and
// counts one hit and no miss, in Stats and in the recorder, for GetOrLoad
// and for each key of GetOrLoadAll.
func TestGetOrLoadCountsWhatItReturns(t *testing.T) {
	rec := &countingRecorder{}
	s := newTestCache(t, CacheOptions[string, int]{MaxEntries: 100, Seed: 5, StatsRecorder: rec})
	var store []string
	testHookMissed = func() {
		for _, k := range store {
			s.Set(k, len(k))
		}
	}
	defer func() { testHookMissed = nil }()
	loaded := 0
	load := func(_ context.Context, k string) (int, error) {
		loaded++
		return -1, nil
	}
	loadAll := func(_ context.Context, ks []string) (map[string]int, error) {
		loaded += len(ks)
		out := map[string]int{}
		for _, k := range ks {
			out[k] = -1
		}
		return out, nil
	}
	ctx := context.Background()

	store = []string{"late"}
	if v, err := s.GetOrLoad(ctx, "late", load); v != 4 || err != nil {
		t.Errorf("GetOrLoad of a key stored after its first look = %d, %v; want 4, nil", v, err)
	}
	s.Set("here", 4)
	store = []string{"later", "latest"}
	got, err := s.GetOrLoadAll(ctx, []string{"here", "later", "latest", "absent"}, loadAll)
	if err != nil || !maps.Equal(got, map[string]int{"here": 4, "later": 5, "latest": 6, "absent": -1}) {
		t.Errorf("GetOrLoadAll = %v, %v", got, err)
	}
	st := s.Stats()
	// Hits: late, here, later, latest. Misses: absent, the one key loaded.
	if loaded != 1 || st.Hits != 4 || st.Misses != 1 || rec.hits.Load() != 4 || rec.misses.Load() != 1 || rec.badArg.Load() != 0 {
		t.Errorf("%d keys loaded, Stats %d hits and %d misses, recorder %d and %d (%d bad counts); want 1, 4 and 1",
			loaded, st.Hits, st.Misses, rec.hits.Load(), rec.misses.Load(), rec.badArg.Load())
	}
}
