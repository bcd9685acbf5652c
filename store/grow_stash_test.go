package store

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
)

// TestGrowthKeepsStashedKeysVisibleBesideNaN grows a table whose stash
// holds real keys and NaN keys (which, as in a Go map, are all different
// keys and hash at random each time) while a reader looks up the real
// stashed keys: every one of them is present throughout, so no lookup may
// miss. Growth once re-hashed each stashed key to lower its first
// candidate's stash hint: a NaN key's hash then named a random bucket, and
// lowering that bucket's hint hid the real keys stashed under it until
// their own turn came, so Get missed keys that were there.
func TestGrowthKeepsStashedKeysVisibleBesideNaN(t *testing.T) {
	trials := 300
	if testing.Short() {
		trials = 100
	}
	var misses atomic.Int64
	for trial := range trials {
		s := newTestStore[float64, int](t, Options{Choices: 1, BucketSize: 1, Seed: uint64(trial + 1)})
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
