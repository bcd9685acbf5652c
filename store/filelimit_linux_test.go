//go:build linux

package store

// The file size limit test sets RLIMIT_FSIZE, which applies to the whole
// process, so it runs its Save in a child process (this test binary
// again). Linux only: other systems' limits and signals differ.

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
)

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
