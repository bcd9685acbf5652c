package store

import (
	"fmt"
	"path/filepath"
	"testing"
)

// A progress callback that panics, in a caller that recovers (an HTTP
// server does), leaves the store as it was before the Save: the view
// ends, the table grows again, and the next Save works. The view used to
// stay installed with the table pinned, so the store never grew again
// (every new key went to the stash) and writers went on copying buckets
// for a snapshot no one was taking.
func TestSaveProgressPanics(t *testing.T) {
	dir := t.TempDir()
	s := newTestMap[string, int](t, MapOptions{Seed: 53})
	for i := range 20_000 {
		s.Set(fmt.Sprint(i), i)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the callback's panic did not reach the caller")
			}
		}()
		s.SaveProgress(filepath.Join(dir, "p.snap"), func(done, total uint64) {
			if done > 0 {
				panic("progress bar")
			}
		})
	}()
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if v := s.view.Load(); v != nil {
		t.Fatal("the panicked Save's view is still installed")
	}
	n := s.Report().Buckets
	// Ten times the keys, or three in the short suite: several growths,
	// or at least one.
	more := 200_000
	if testing.Short() {
		more = 60_000
	}
	for i := range more {
		s.Set(fmt.Sprint("more", i), i)
	}
	if r := s.Report(); r.Buckets == n || r.Stash > 1000 {
		t.Fatalf("the table did not grow after the panicked Save: %d buckets, %d keys in the stash", r.Buckets, r.Stash)
	}
	r, _ := saveOpen(t, s, nil)
	sameContents(t, s, r)
}
