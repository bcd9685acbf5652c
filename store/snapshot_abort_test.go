package store

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// A cache's Save abandoned mid-walk (its context canceled) while writers
// write the buckets they copy to the file themselves (assist) leaves the
// file to no one once it returns. A cache's writers hold bucket locks,
// not the store's mutex, so ending the view did not wait for one inside
// an assist: SaveContext aborted the file (rolled back bbolt's
// transaction and unmapped it) while a writer was still appending to it,
// a data race that -race reports here and that could fault on the
// unmapped pages. The walker's other errors (a value that does not
// encode) took the same path.
func TestSaveAbandonedWhileWritersAssist(t *testing.T) {
	defer func(b int) { pendingBound = b }(pendingBound)
	pendingBound = 0 // writers write every bucket they copy
	const keys = 40_000
	dir := t.TempDir()
	s := newTestCache[string, int](t, CacheOptions{Seed: 57, MaxEntries: 2 * keys})
	for i := range keys {
		s.Set(fmt.Sprint(i), i)
	}
	rounds := 10
	if testing.Short() {
		rounds = 2
	}
	for range rounds {
		var stop atomic.Bool
		var wg sync.WaitGroup
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := g; !stop.Load(); i += 7 {
					s.Set(fmt.Sprint(i%keys), i)
				}
			}()
		}
		ctx, cancel := context.WithCancel(context.Background())
		err := s.SaveContext(ctx, filepath.Join(dir, "s.snap"), func(done, total uint64) {
			if done > 0 {
				cancel()
			}
		})
		stop.Store(true)
		wg.Wait()
		if err == nil {
			t.Fatal("the walk ended before the cancel: make the cache larger")
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	r, _ := saveOpen(t, s, nil)
	sameContents(t, s, r)
}
