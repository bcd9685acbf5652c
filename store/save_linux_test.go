package store

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
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

// fileLimitDir names, in the child's environment, the directory the
// child saves into.
const fileLimitDir = "TWOCHOICE_TEST_FILE_LIMIT_DIR"

// A Save that runs into the file size limit (ulimit -f) fails with
// ErrWrite wrapping the system's EFBIG, all the way through bbolt, and
// leaves the previous snapshot whole and no temporary file. SIGXFSZ is
// ignored, as Go programs do unless they ask for it, so that the write
// returns EFBIG instead of the signal killing the process.
func TestSaveFileSizeLimit(t *testing.T) {
	dir := os.Getenv(fileLimitDir)
	if dir == "" {
		dir = t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestSaveFileSizeLimit$", "-test.v")
		cmd.Env = append(os.Environ(), fileLimitDir+"="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestSaveFileSizeLimit") {
			t.Fatalf("the child process under a file size limit: %v\n%s", err, out)
		}
		for line := range strings.Lines(string(out)) {
			if strings.Contains(line, "filelimit_linux_test.go") {
				t.Log(strings.TrimSpace(line))
			}
		}
		return
	}
	signal.Ignore(syscall.SIGXFSZ)
	path := filepath.Join(dir, "s.snap")
	s := newTestStore[string, []byte](t, Options{Seed: 51})
	for i := range 100 {
		s.Set(fmt.Sprint(i), []byte("small"))
	}
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	val := make([]byte, 1000)
	for i := range 5000 {
		s.Set(fmt.Sprint("big", i), val)
	}
	const limit = 1 << 20
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = limit
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	err := s.Save(path)
	t.Logf("saving 5 MB under a limit of 1 MiB: %v", err)
	if !errors.Is(err, ErrWrite) || !errors.Is(err, syscall.EFBIG) || !strings.Contains(err.Error(), path) {
		t.Fatalf("saving 5 MB under a limit of 1 MiB: %v; want ErrWrite matching syscall.EFBIG and naming the file", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	r, err := Open[string, []byte](path, nil)
	if err != nil || r.Len() != 100 {
		t.Fatalf("the previous snapshot: %v", err)
	}
}
