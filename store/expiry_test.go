package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// A key read every half TTL stays alive over 20 TTLs under
// ExpireAfterAccess; left alone for a TTL it is gone, and the listener
// hears it expired.
func TestExpireAfterAccessSlides(t *testing.T) {
	const ttl = time.Minute
	clk := newFakeClock()
	var evs []DeletionEvent[string, int]
	s := newTestCache(t, CacheOptions[string, int]{MaxEntries: 100, Seed: 1, Clock: clk, ExpireAfterAccess: ttl,
		OnDeletion: func(ev DeletionEvent[string, int]) { evs = append(evs, ev) }})
	s.Set("k", 1)
	s.Set("other", 2) // never read: expires after one TTL
	for i := range 40 {
		clk.advance(ttl / 2)
		if v, ok := s.Get("k"); !ok || v != 1 {
			t.Fatalf("read %d, %v after the Set: Get = %d, %v", i+1, time.Duration(i+1)*ttl/2, v, ok)
		}
	}
	if _, ok := s.Get("other"); ok {
		t.Fatal("an entry never read outlived its TTL")
	}
	clk.advance(ttl)
	if v, ok := s.Get("k"); ok {
		t.Fatalf("after an idle TTL: Get = %d, true", v)
	}
	want := []DeletionEvent[string, int]{{"other", 2, DeletionExpired}, {"k", 1, DeletionExpired}}
	if fmt.Sprint(evs) != fmt.Sprint(want) {
		t.Errorf("events %v, want %v", evs, want)
	}
	if st := s.Stats(); st.Expirations != 2 || st.Hits != 40 || s.Len() != 0 {
		t.Errorf("Stats %+v, Len %d; want 2 expirations, 40 hits, Len 0", st, s.Len())
	}
}

// A read writes the expiry word only when it moves it by more than a
// 32nd of the TTL, and an entry then lives between 31/32 and 32/32 of the
// TTL after its last read.
func TestExpireAfterAccessPrecision(t *testing.T) {
	const ttl = 32 * time.Second
	clk := newFakeClock()
	s := newTestCache(t, CacheOptions[string, int]{MaxEntries: 100, Seed: 2, Clock: clk, ExpireAfterAccess: ttl})
	s.Set("k", 1)
	tab := s.tab.Load()
	i, j, ok := tab.findSlot("k", tab.hash("k"))
	if !ok {
		t.Fatal("k not found")
	}
	words := map[int64]bool{tab.meta[i].exp[j].Load(): true}
	const reads = 1000
	for range reads {
		clk.advance(ttl / 1000)
		s.Get("k")
		words[tab.meta[i].exp[j].Load()] = true
	}
	// 1000 reads over 32 s move the expiry by 32 s: a write every
	// second at most, 33 words with the first.
	if len(words) > 33 || len(words) < 2 {
		t.Errorf("%d reads wrote %d expiries; want at most one a 32nd of the TTL", reads, len(words)-1)
	}
	clk.advance(ttl - ttl/32 - time.Millisecond)
	if _, ok := s.Peek("k"); !ok {
		t.Error("gone before 31/32 of the TTL after its last read")
	}
	clk.advance(ttl/32 + time.Millisecond)
	if _, ok := s.Peek("k"); ok {
		t.Error("alive a TTL after its last read")
	}
}

// GetOrSet's hit slides the expiry as a Get's does; SetWithTTL's entries
// slide too, and an entry without an expiry never gets one.
func TestExpireAfterAccessOtherReads(t *testing.T) {
	const ttl = time.Minute
	clk := newFakeClock()
	s := newTestCache(t, CacheOptions[string, int]{MaxEntries: 100, Seed: 3, Clock: clk, ExpireAfterAccess: ttl})
	s.Set("gos", 1)
	s.SetWithTTL("short", 2, ttl/4)
	s.SetWithTTL("never", 3, 0)
	for range 10 {
		clk.advance(ttl / 8)
		if v, ok := s.GetOrSet("gos", 9); !ok || v != 1 {
			t.Fatalf("GetOrSet = %d, %v", v, ok)
		}
		if _, ok := s.Get("short"); !ok {
			t.Fatal("a SetWithTTL entry read every 8th of the TTL expired")
		}
	}
	clk.advance(10 * ttl)
	if _, ok := s.Get("never"); !ok {
		t.Error("an entry set with no TTL expired")
	}
	if _, ok := s.Get("gos"); ok {
		t.Error("gos outlived its TTL")
	}
}

// The options that mix kinds of expiry, or are negative, are refused.
func TestExpiryOptions(t *testing.T) {
	calc := keyTTL{}
	for _, o := range []CacheOptions[string, int]{
		{MaxEntries: 10, DefaultTTL: time.Second, ExpireAfterAccess: time.Second},
		{MaxEntries: 10, ExpireAfterAccess: -1},
		{MaxEntries: 10, RefreshAfter: -1},
		{MaxEntries: 10, ExpiryCalculator: calc, DefaultTTL: time.Second},
		{MaxEntries: 10, ExpiryCalculator: calc, ExpireAfterAccess: time.Second},
	} {
		if _, err := NewCache(o); !errors.Is(err, ErrOptions) {
			t.Errorf("NewCache(%+v): %v, want ErrOptions", o, err)
		} else {
			t.Log(err)
		}
	}
	s := newTestCache(t, CacheOptions[string, int]{MaxEntries: 10, ExpiryCalculator: calc, RefreshAfter: time.Hour})
	if o := s.Options(); o.ExpiryCalculator != calc || o.RefreshAfter != time.Hour {
		t.Errorf("Options() = %+v", o)
	}
	s2 := newTestCache(t, CacheOptions[string, int]{MaxEntries: 10, ExpireAfterAccess: time.Hour})
	if o := s2.Options(); o.ExpiryCalculator != nil || o.ExpireAfterAccess != time.Hour {
		t.Errorf("Options() = %+v", o)
	}
}

// keyTTL is a calculator for the tests: a new entry lives its value in
// seconds (≤ 0: forever), an update keeps what the entry had left, and a
// read of a key starting with "s" slides it to its value in seconds.
type keyTTL struct{}

func (keyTTL) ExpireAfterCreate(_ string, v int) time.Duration { return time.Duration(v) * time.Second }
func (keyTTL) ExpireAfterUpdate(_ string, _ int, remaining time.Duration) time.Duration {
	return remaining
}
func (keyTTL) ExpireAfterRead(k string, v int, remaining time.Duration) time.Duration {
	if k[0] == 's' {
		return time.Duration(v) * time.Second
	}
	return remaining
}

// A calculator's expiries against a model of them, over random Sets,
// SetWithTTLs, Computes, GetOrSets, Gets and clock moves.
func TestExpiryCalculatorAgainstModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	clk := newFakeClock()
	s := newTestCache(t, CacheOptions[string, int]{MaxEntries: 1000, Seed: 4, Clock: clk, ExpiryCalculator: keyTTL{}})
	type entry struct {
		v   int
		exp int64 // 0: never
	}
	model := map[string]entry{}
	now := func() int64 { return clk.ns.Load() }
	sec := int64(time.Second)
	// A read slides an expiry only by more than a 32nd of the TTL (at
	// most 34 s here), so the cache's expiries are within 1.1 s of the
	// model's: live says when k's state is too near its expiry to tell,
	// and the operations whose outcome depends on it are skipped then.
	live := func(k string) (e entry, found, unsure bool) {
		e, ok := model[k]
		if !ok || e.exp == 0 {
			return e, ok, false
		}
		if d := e.exp - now(); d > -2*sec && d < 2*sec {
			return e, ok, true
		}
		if e.exp <= now() {
			delete(model, k)
			return e, false, false
		}
		return e, true, false
	}
	keys := []string{"a", "b", "c", "s1", "s2", "s3"}
	for step := range 20_000 {
		k := keys[rng.IntN(len(keys))]
		v := rng.IntN(40) - 5
		switch r := rng.IntN(10); {
		case r < 3:
			old, found, unsure := live(k)
			if unsure {
				continue
			}
			s.Set(k, v)
			e := entry{v: v}
			if found {
				e.exp = old.exp
			} else if v > 0 {
				e.exp = now() + int64(v)*sec
			}
			model[k] = e
		case r < 4:
			s.SetWithTTL(k, v, time.Duration(v)*time.Second)
			e := entry{v: v}
			if v > 0 {
				e.exp = now() + int64(v)*sec
			}
			model[k] = e
		case r < 5:
			old, found, unsure := live(k)
			if unsure {
				continue
			}
			s.Compute(k, func(int, bool) (int, ComputeOp) { return v, ComputeSet })
			e := entry{v: v}
			if found {
				e.exp = old.exp
			} else if v > 0 {
				e.exp = now() + int64(v)*sec
			}
			model[k] = e
		case r < 8:
			e, found, unsure := live(k)
			if unsure {
				continue
			}
			got, ok := s.Get(k)
			if ok != found || ok && got != e.v {
				t.Fatalf("step %d: Get(%s) = %d, %v; the model has %+v, %v (now %d)", step, k, got, ok, e, found, now())
			}
			// A read calls the calculator only for an entry that has
			// an expiry.
			if found && k[0] == 's' && e.exp != 0 {
				if e.v > 0 {
					e.exp = now() + int64(e.v)*sec
				} else {
					e.exp = 0
				}
				model[k] = e
			}
		case r < 9:
			e, found, unsure := live(k)
			if unsure {
				continue
			}
			got, ok := s.GetOrSet(k, v)
			if ok != found || ok && got != e.v {
				t.Fatalf("step %d: GetOrSet(%s) = %d, %v; the model has %+v, %v", step, k, got, ok, e, found)
			}
			switch {
			case !found:
				e = entry{v: v}
				if v > 0 {
					e.exp = now() + int64(v)*sec
				}
			case k[0] == 's' && e.exp != 0 && e.v > 0:
				e.exp = now() + int64(e.v)*sec
			case k[0] == 's' && e.exp != 0:
				e.exp = 0
			}
			model[k] = e
		default:
			clk.advance(time.Duration(rng.IntN(3000)) * time.Millisecond)
		}
	}
}

// An expired entry that a Set or a Compute replaces counts as an
// expiration and a Set of a new key, as the listener reports it.
func TestExpiredReplacedCounts(t *testing.T) {
	clk := newFakeClock()
	var evs []DeletionEvent[string, int]
	s := newTestCache(t, CacheOptions[string, int]{MaxEntries: 100, Seed: 5, Clock: clk,
		OnDeletion: func(ev DeletionEvent[string, int]) { evs = append(evs, ev) }})
	s.SetWithTTL("a", 1, time.Minute)
	s.SetWithTTL("b", 2, time.Minute)
	s.SetWithTTL("c", 3, time.Minute)
	clk.advance(2 * time.Minute)
	s.Set("a", 10)
	s.Compute("b", func(old int, found bool) (int, ComputeOp) {
		if found {
			t.Errorf("Compute found the expired entry %d", old)
		}
		return 20, ComputeSet
	})
	if v, ok := s.GetOrSet("c", 30); ok {
		t.Errorf("GetOrSet found the expired entry %d", v)
	}
	s.Set("a", 11) // a plain update
	st := s.Stats()
	if st.Sets != 7 || st.Expirations != 3 || st.Evictions != 0 || s.Len() != 3 {
		t.Errorf("Stats %+v, Len %d; want 7 Sets, 3 expirations, no eviction, Len 3", st, s.Len())
	}
	want := "[{a 1 expired} {b 2 expired} {c 3 expired} {a 10 replaced}]"
	if fmt.Sprint(evs) != want {
		t.Errorf("events %v, want %v", evs, want)
	}
	// Sets = Len + the events of entries that left.
	if int(st.Sets) != s.Len()+len(evs) {
		t.Errorf("%d Sets, Len %d, %d events", st.Sets, s.Len(), len(evs))
	}
}

// A copy into a table that gives up (to restart into a larger one)
// counts and reports nothing: only the copy that is kept does.
func TestCopyIntoGivingUpCountsNothing(t *testing.T) {
	clk := newFakeClock()
	events := 0
	s := newTestCache(t, CacheOptions[int, int]{MaxEntries: 100_000, Seed: 6, Clock: clk,
		OnDeletion: func(DeletionEvent[int, int]) { events++ }})
	for i := range 300 {
		s.SetWithTTL(i, i, time.Minute)
	}
	clk.advance(2 * time.Minute)
	for i := 300; i < 600; i++ {
		s.Set(i, i)
	}
	tab := s.tab.Load()
	if tab.final {
		t.Fatal("the test wants a table on the way to the final one")
	}
	o := s.configOf(tab)
	small := newCacheTable[int, int](&o, s.lay, sizeAtLeast(&o, 2), s.tq)
	s.mu.Lock()
	placed := s.copyInto(small, tab, false)
	pending := len(s.pending)
	s.mu.Unlock()
	if placed {
		t.Fatalf("%d entries placed in a table of %d slots", tab.live.Load(), small.slots())
	}
	if st := s.Stats(); st.Expirations != 0 || pending != 0 {
		t.Errorf("a copy that gave up counted %d expirations, left %d reports", st.Expirations, pending)
	}
	// A growth that keeps its copy counts each expired entry once.
	s.grow(tab)
	if st := s.Stats(); st.Expirations != 300 || events != 300 || s.Len() != 300 {
		t.Errorf("after a growth: %d expirations, %d events, Len %d; want 300, 300, 300", st.Expirations, events, s.Len())
	}
}

// RemoveExpired removes exactly the expired entries, reports and counts
// each, and leaves Len counting the live ones; in tables on the way and in
// the final one.
func TestRemoveExpired(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, n := range []int{50, 5000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(n)))
			clk := newFakeClock()
			events := map[int]DeletionCause{}
			s := newTestCache(t, CacheOptions[int, int]{MaxEntries: 4000, Seed: 7, Clock: clk,
				OnDeletion: func(ev DeletionEvent[int, int]) { events[ev.Key] = ev.Cause }})
			if s.RemoveExpired() != 0 {
				t.Fatal("an empty cache removed something")
			}
			exp := map[int]time.Duration{}
			for k := range n {
				d := time.Duration(rng.IntN(100)) * time.Second // 0: never
				s.SetWithTTL(k, k, d)
				exp[k] = d
			}
			// What is left after the Sets, and its expiries.
			clk.advance(50 * time.Second)
			want, live := 0, 0
			for k, d := range exp {
				if _, ok := s.Peek(k); !ok && events[k] == 0 && (d == 0 || d > 50*time.Second) {
					continue // evicted by a later Set, never reported otherwise
				}
				if d != 0 && d <= 50*time.Second {
					if events[k] == 0 {
						want++
					}
				} else if events[k] == 0 {
					live++
				}
			}
			before := s.Stats().Expirations
			if got := s.RemoveExpired(); got != want {
				t.Errorf("RemoveExpired = %d, want %d", got, want)
			}
			if s.Len() != live {
				t.Errorf("Len = %d after RemoveExpired, %d live", s.Len(), live)
			}
			if st := s.Stats(); st.Expirations-before != uint64(want) {
				t.Errorf("%d expirations counted, want %d", st.Expirations-before, want)
			}
			for k, d := range exp {
				if d != 0 && d <= 50*time.Second && events[k] != DeletionExpired && events[k] != DeletionEvicted {
					t.Fatalf("key %d (TTL %v): event %v", k, d, events[k])
				}
			}
			if s.RemoveExpired() != 0 {
				t.Error("a second RemoveExpired removed something")
			}
		})
	}
}

// RemoveExpired alongside writers and a growing table: the invariants
// hold and every entry it removes had expired.
func TestRemoveExpiredConcurrent(t *testing.T) {
	clk := newFakeClock()
	s := newTestCache(t, CacheOptions[int, int]{MaxEntries: 50_000, Seed: 8, Clock: clk,
		OnDeletion: func(ev DeletionEvent[int, int]) {
			if ev.Cause == DeletionExpired && ev.Value >= 0 {
				t.Errorf("key %d, which never expires, reported expired", ev.Key)
			}
		}})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 2 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := g<<20 | i%20_000
				if i%2 == 0 {
					s.SetWithTTL(k, -1, time.Millisecond)
				} else {
					s.Set(k, k)
				}
			}
		})
	}
	for range 50 {
		clk.advance(time.Millisecond)
		s.RemoveExpired()
	}
	close(stop)
	wg.Wait()
}

// A snapshot keeps a cache's durations, and OpenCache's options replace
// the kind of expiry as a whole.
func TestSnapshotKeepsExpiryOptions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.snap")
	for _, tc := range []struct {
		saved, given, want CacheOptions[string, int]
	}{
		{CacheOptions[string, int]{DefaultTTL: time.Hour}, CacheOptions[string, int]{}, CacheOptions[string, int]{DefaultTTL: time.Hour}},
		{CacheOptions[string, int]{ExpireAfterAccess: time.Minute, RefreshAfter: time.Second}, CacheOptions[string, int]{},
			CacheOptions[string, int]{ExpireAfterAccess: time.Minute, RefreshAfter: time.Second}},
		{CacheOptions[string, int]{ExpireAfterAccess: time.Minute}, CacheOptions[string, int]{DefaultTTL: time.Hour},
			CacheOptions[string, int]{DefaultTTL: time.Hour}},
		{CacheOptions[string, int]{DefaultTTL: time.Minute, RefreshAfter: time.Second}, CacheOptions[string, int]{ExpiryCalculator: keyTTL{}, RefreshAfter: time.Hour},
			CacheOptions[string, int]{ExpiryCalculator: keyTTL{}, RefreshAfter: time.Hour}},
	} {
		tc.saved.MaxEntries = 100
		s := newTestCache(t, tc.saved)
		s.Set("a", 1)
		if err := s.Save(path); err != nil {
			t.Fatal(err)
		}
		r, err := OpenCache(path, &tc.given)
		if err != nil {
			t.Fatal(err)
		}
		checkAtEnd(t, r)
		o := r.Options()
		if o.DefaultTTL != tc.want.DefaultTTL || o.ExpireAfterAccess != tc.want.ExpireAfterAccess ||
			o.RefreshAfter != tc.want.RefreshAfter || o.ExpiryCalculator != tc.want.ExpiryCalculator {
			t.Errorf("saved %+v, opened with %+v: options %+v", tc.saved, tc.given, o)
		}
		if v, ok := r.Get("a"); !ok || v != 1 {
			t.Errorf("Get = %d, %v", v, ok)
		}
	}
	s := newTestCache(t, CacheOptions[string, int]{MaxEntries: 100})
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	for _, o := range []CacheOptions[string, int]{{DefaultTTL: 1, ExpireAfterAccess: 1}, {ExpiryCalculator: keyTTL{}, DefaultTTL: 1}, {RefreshAfter: -1}} {
		if _, err := OpenCache(path, &o); !errors.Is(err, ErrOptions) {
			t.Errorf("OpenCache with %+v: %v, want ErrOptions", o, err)
		}
	}
}

// The invariant checker catches write times that disagree with the
// slots.
func TestInvariantCheckerCatchesWriteTimes(t *testing.T) {
	for name, breakIt := range map[string]func(tab *cacheTable[string, int], i uint64, j int){
		"full without": func(tab *cacheTable[string, int], i uint64, j int) { tab.wrote[i].at[j].Store(0) },
		"empty with":   func(tab *cacheTable[string, int], i uint64, j int) { tab.wrote[i].at[(j+1)%slotsPerBucket].Store(5) },
	} {
		s, err := NewCache(CacheOptions[string, int]{MaxEntries: 100, Seed: 1, RefreshAfter: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		s.Set("a", 1)
		tab := s.tab.Load()
		i, j, _ := tab.findSlot("a", tab.hash("a"))
		if err := s.checkInvariants(); err != nil {
			t.Fatalf("healthy cache fails: %v", err)
		}
		breakIt(tab, i, j)
		if err := s.checkInvariants(); err == nil {
			t.Errorf("%s: corruption not caught", name)
		}
	}
}
