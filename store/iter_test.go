package store

import (
	"strconv"
	"testing"
	"time"
)

// All never yields a key removed before the loop reached it (All's
// doc): here the loop body removes every key at the first key it gets,
// by Clear, by Delete, or (a cache with TTLs) by letting them all expire,
// and after that the loop may only yield the rest of the bucket it had
// reached, at most BucketSize-1 keys, where walking on through the table
// that Clear replaced would yield every key of the store.
func TestAllSkipsKeysRemovedBeforeReached(t *testing.T) {
	const n = 2000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
	}
	for _, tc := range []struct {
		name   string
		o      Options
		remove func(s kv[string, int], clk *fakeClock)
	}{
		{"clear", Options{}, func(s kv[string, int], _ *fakeClock) { s.Clear() }},
		{"clear/cache", Options{MaxEntries: 4 * n}, func(s kv[string, int], _ *fakeClock) { s.Clear() }},
		{"clear/size1", Options{BucketSize: 1}, func(s kv[string, int], _ *fakeClock) { s.Clear() }},
		{"delete", Options{}, func(s kv[string, int], _ *fakeClock) {
			for _, k := range keys {
				s.Delete(k)
			}
		}},
		{"delete/cache", Options{MaxEntries: 4 * n}, func(s kv[string, int], _ *fakeClock) {
			for _, k := range keys {
				s.Delete(k)
			}
		}},
		{"expire/cache", Options{MaxEntries: 4 * n, DefaultTTL: time.Minute}, func(_ kv[string, int], clk *fakeClock) {
			clk.advance(time.Hour)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			o := tc.o
			o.Seed = 5
			if o.MaxEntries > 0 {
				o.Clock = clk
			}
			s := newTestStore[string, int](t, o)
			for i, k := range keys {
				s.Set(k, i)
			}
			if s.Len() != n {
				t.Fatalf("Len %d after %d Sets", s.Len(), n)
			}
			yielded, after := 0, 0
			for range s.All() {
				if yielded++; yielded == 1 {
					tc.remove(s, clk)
					continue
				}
				after++
			}
			if size := s.options().BucketSize; after > size-1 {
				t.Fatalf("All yielded %d keys after they were all removed (%d in all); at most %d were reached before", after, yielded, size-1)
			}
			for k := range s.All() {
				t.Fatalf("All yields %q after the removal", k)
			}
		})
	}
}
