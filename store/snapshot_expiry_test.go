package store

import (
	"testing"
	"time"
)

// TestOpenLeavesOutEntriesExpiringNow: an entry whose expiry is exactly
// the clock's time when the snapshot is opened has expired (Get would miss
// it), so Open leaves it out: Len counts only the live entries, and the
// restored store passes its invariant checks with a load report that
// matches what it holds.
func TestOpenLeavesOutEntriesExpiringNow(t *testing.T) {
	forEvictConfigs(t, 256, 21, func(t *testing.T, o Options) {
		clk := withFakeClock(&o)
		s := newTestCacheOf[int, int](t, o)
		live := 0
		for k := range 200 {
			if k%2 == 0 {
				s.SetWithTTL(k, k, time.Second)
			} else {
				s.Set(k, k)
			}
		}
		for k := range s.All() {
			if k%2 == 1 {
				live++
			}
		}
		clk.advance(time.Second) // now == every TTL entry's expiry
		r, _ := saveOpen(t, s, &Options{Clock: clk})
		if r.Len() != live {
			t.Fatalf("Open restored %d entries, want the %d without a TTL", r.Len(), live)
		}
		for k := range r.All() {
			if k%2 == 0 {
				t.Fatalf("key %d restored, but it expired as the snapshot was opened", k)
			}
		}
		if got := r.Report().Entries; got != live {
			t.Fatalf("load report of the restored store: %d entries, want %d", got, live)
		}
	})
}
