package store

// The full-disk tests need a small file system they can fill, a tmpfs
// mounted for them (testutil.SmallTmpfs), and statfs(2) for its free space:
// Linux only. The other platforms run the kill test (durability_test.go).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/twochoice/twochoice/internal/testutil"
)

// savedThenGrown mounts a tmpfs of the given size and saves a store of
// 100 small entries at path in it (the snapshot a failed Save must leave
// whole), then sets 5,000 more entries of valLen bytes each, "big0" to
// "big4999", for the next Save to write.
func savedThenGrown(t *testing.T, size string, seed uint64, valLen int) (dir, path string, s kv[string, []byte]) {
	t.Helper()
	dir = testutil.SmallTmpfs(t, size)
	path = filepath.Join(dir, "s.snap")
	s = newTestStore[string, []byte](t, Options{Seed: seed})
	for i := range 100 {
		s.Set(fmt.Sprint(i), []byte("small"))
	}
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	val := make([]byte, valLen)
	for i := range 5000 {
		s.Set(fmt.Sprint("big", i), val)
	}
	return dir, path, s
}

// A full disk fails Save with ErrNoSpace, leaves no temporary file, and
// leaves the previous snapshot whole. It needs a small file system, which
// root can mount.
func TestSaveDiskFull(t *testing.T) {
	dir, path, s := savedThenGrown(t, "2m", 41, 1000)
	err := s.Save(path)
	if !errors.Is(err, ErrNoSpace) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("saving 5 MB into 2 MB: %v", err)
	}
	r, err := Open[string, []byte](path, nil)
	if err != nil || r.Len() != 100 {
		t.Fatalf("the previous snapshot: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	// The store is unharmed and saves once there is room.
	for i := range 5000 {
		s.Delete(fmt.Sprint("big", i))
	}
	if err := s.Save(path); err != nil {
		t.Fatalf("saving after the disk full: %v", err)
	}
}

// A disk that fills at any point of a Save (the file created, records
// committed, the metadata, the sync) fails it with ErrNoSpace, matching
// the system's ENOSPC however deep in bbolt it arose, leaves no
// temporary file and the previous snapshot whole: the free space is
// stepped from none to enough, a ballast file taking the rest.
func TestSaveDiskFullAtEveryPoint(t *testing.T) {
	dir, path, s := savedThenGrown(t, "8m", 43, 200)
	step := int64(32 << 10) // one bbolt page is 4 KiB: -store.long tries each
	switch {
	case *longTests:
		step = 4 << 10
	case testing.Short():
		step = 128 << 10
	}
	ballast := filepath.Join(dir, "ballast")
	failed := 0
	for leave := int64(0); ; leave += step {
		os.Remove(ballast)
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil {
			t.Fatal(err)
		}
		free := int64(st.Bavail) * st.Bsize
		if err := os.WriteFile(ballast, make([]byte, max(free-leave, 0)), 0o644); err != nil {
			t.Fatal(err)
		}
		err := s.Save(path)
		if err != nil && (!errors.Is(err, ErrNoSpace) || !errors.Is(err, syscall.ENOSPC)) {
			t.Fatalf("%d bytes free: %v; want ErrNoSpace matching syscall.ENOSPC", leave, err)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
			t.Fatalf("%d bytes free: temporary files left: %v", leave, left)
		}
		r, oerr := Open[string, []byte](path, nil)
		if oerr != nil {
			t.Fatalf("%d bytes free: the snapshot: %v", leave, oerr)
		}
		if err == nil {
			if r.Len() != s.Len() {
				t.Fatalf("saved %d entries of %d", r.Len(), s.Len())
			}
			break
		}
		if r.Len() != 100 {
			t.Fatalf("%d bytes free: the previous snapshot holds %d entries", leave, r.Len())
		}
		failed++
	}
	t.Logf("%d saves failed with the disk full before one fitted", failed)
}
