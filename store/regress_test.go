package store

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twochoice/twochoice/hashfn"
)

// A hit that raced the removal of its entry must not write the emptied
// slot's policy word (which must stay 0), nor a replacing key's: touch
// swaps only the word the lookup read with the entry.
func TestTouchAfterRemovalWritesNothing(t *testing.T) {
	s, err := NewCache(CacheOptions[int, int]{MaxEntries: 64, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	s.Set(1, 1)
	tb := s.tab.Load()
	h := s.hash(1)
	var c [hashfn.MaxChoices]uint64
	for _, i := range tb.cands(h, &c) {
		f, ok := tb.lookup(i, 1, tagOf(h), false)
		if !ok {
			continue
		}
		j, acc := f.slot, f.acc
		if acc == 0 {
			t.Fatalf("a live entry's policy word is 0")
		}
		b := tb.bucket(i)
		b.sync.lock()
		tb.clearSlot(i, j)
		b.sync.unlock()
		// The hit lands after the removal, with the word it read before.
		tb.touch(i, j, acc, uint64(acc)+1000, 0, &s.pol)
		if w := tb.cbucket(i).acc[j].Load(); w != 0 {
			t.Fatalf("the emptied slot's policy word is %#x, want 0", w)
		}
		return
	}
	t.Fatal("key 1 not found")
}

// A TTL of centuries (or math.MaxInt64, "no real limit") keeps the entry:
// its expiry must not wrap around to a time long past.
func TestLongTTLKeepsTheEntry(t *testing.T) {
	clk := newFakeClock()
	s, err := NewCache(CacheOptions[string, int]{MaxEntries: 1000, Clock: clk, DefaultTTL: math.MaxInt64})
	if err != nil {
		t.Fatal(err)
	}
	s.Set("default", 1)
	s.SetWithTTL("250y", 2, 250*365*24*time.Hour)
	s.SetWithTTL("max", 3, math.MaxInt64)
	clk.advance(100 * 365 * 24 * time.Hour)
	for k, want := range map[string]int{"default": 1, "250y": 2, "max": 3} {
		if v, ok := s.Get(k); !ok || v != want {
			t.Errorf("Get(%q) = %v, %v; want %v", k, v, ok, want)
		}
	}
	if st := s.Stats(); st.Expirations != 0 || s.Len() != 3 {
		t.Errorf("expirations %d, Len %d; want 0 and 3", st.Expirations, s.Len())
	}
}

// An expiry that comes out at exactly 0 (which means "never") still
// expires: it takes a clock before 1970, which an injected clock may be.
func TestExpiryAtZeroStillExpires(t *testing.T) {
	clk := new(fakeClock)
	clk.ns.Store(-int64(time.Second))
	s, err := NewCache(CacheOptions[int, int]{MaxEntries: 100, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	s.SetWithTTL(1, 1, time.Second)
	clk.advance(time.Hour)
	if v, ok := s.Get(1); ok {
		t.Errorf("Get after its TTL = %v, true; want a miss", v)
	}
}

// TestGrowthKeepsStashedKeysVisibleBesideNaN grows a table whose stash
// holds real keys and NaN keys (which, as in a Go map, are all different
// keys and hash at random each time) while a reader looks up the real
// stashed keys: every one of them is present throughout, so no lookup may
// miss. A growth that re-hashes each stashed key to lower its first
// candidate's stash hint fails it: a NaN key's hash names a random bucket,
// and lowering that bucket's hint hides the real keys stashed under it
// until their own turn comes, so Get misses keys that are there.
func TestGrowthKeepsStashedKeysVisibleBesideNaN(t *testing.T) {
	trials := 300
	if testing.Short() {
		trials = 100
	}
	var misses atomic.Int64
	for trial := range trials {
		s := newTestMap[float64, int](t, MapOptions{Choices: 1, BucketSize: 1, Seed: uint64(trial + 1)})
		// Keep the table from growing while keys pile into the stash.
		tb := s.pin()
		for i := range 64 {
			s.Set(float64(i), i)
			s.Set(math.NaN(), -1)
		}
		var stashed []float64
		for _, e := range tb.stash.entries() {
			if e.key == e.key {
				stashed = append(stashed, e.key)
			}
		}
		s.unpin()
		if len(stashed) == 0 {
			t.Fatalf("trial %d: no real key in the stash", trial)
		}
		var (
			wg   sync.WaitGroup
			stop atomic.Bool
			go_  = make(chan struct{})
		)
		wg.Add(1)
		go func() {
			defer wg.Done()
			close(go_)
			for !stop.Load() {
				for _, k := range stashed {
					if v, ok := s.Get(k); !ok || v != int(k) {
						misses.Add(1)
					}
				}
			}
		}()
		<-go_
		s.Set(1000, 1000) // a new key: the table grows, stash first
		for s.tabs.Load().old != nil {
			s.Set(1000, 1000)
		}
		stop.Store(true)
		wg.Wait()
		for _, k := range stashed {
			if v, ok := s.Get(k); !ok || v != int(k) {
				t.Fatalf("trial %d: after the growth Get(%v) = %v, %v", trial, k, v, ok)
			}
		}
	}
	if n := misses.Load(); n > 0 {
		t.Errorf("Get missed a stashed key %d times while the table grew", n)
	}
}

// The caller's own options for a restored store (DefaultTTL) that cannot
// apply to the file are the caller's mistake, not damage: Open said
// ErrCorrupt for them, and a program that rebuilds a corrupt snapshot (the
// README's example) would have thrown a good file away.
func TestOpenBadTTLIsNotCorrupt(t *testing.T) {
	cache := newTestCache(t, CacheOptions[string, int]{Seed: 5, MaxEntries: 100})
	cache.Set("a", 1)
	_, cpath := saveOpen(t, cache, nil)
	for _, tc := range []struct {
		path string
		ttl  time.Duration
		want error
	}{
		{cpath, -time.Hour, ErrOptions},
	} {
		r, err := Open[string, int](tc.path, &Options{DefaultTTL: tc.ttl})
		if r != nil || !errors.Is(err, tc.want) || errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("Open %s with DefaultTTL %v: %v, want %v naming the file and not ErrCorrupt", tc.path, tc.ttl, err, tc.want)
		}
	}
	r, err := Open[string, int](cpath, &Options{DefaultTTL: time.Hour})
	if err != nil {
		t.Fatalf("a cache with a TTL: %v", err)
	}
	if r.options().DefaultTTL != time.Hour {
		t.Errorf("DefaultTTL %v, want 1h", r.options().DefaultTTL)
	}
}

// Save while another goroutine clears the store and fills it again, key 0
// first: each snapshot is the store at one instant, so it holds keys
// 0 … p-1 for some p, in a store that passes the invariant checks.
func TestSaveDuringClear(t *testing.T) {
	s := newTestMap[int, int](t, MapOptions{Seed: 61})
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			s.Clear()
			for i := range 3000 {
				s.Set(i, i)
			}
		}
	}()
	dir := t.TempDir()
	saves := 20
	if testing.Short() {
		saves = 8
	}
	for x := range saves {
		p := filepath.Join(dir, fmt.Sprint(x, ".snap"))
		if err := s.Save(p); err != nil {
			t.Fatal(err)
		}
		r, err := Open[int, int](p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.checkInvariants(); err != nil {
			t.Fatal(err)
		}
		n := r.Len()
		for i := range n {
			if v, ok := r.Get(i); !ok || v != i {
				t.Fatalf("snapshot %d: %d entries, but key %d = %d, %v", x, n, i, v, ok)
			}
		}
	}
	stop.Store(true)
	<-done
}
