//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/twochoice/twochoice/store"
)

// Ctrl-C while serve opens its --snapshot stops it at once, "interrupted",
// without waiting for Open to end: Open takes seconds for millions of
// keys. The test holds the file locked, so that Open waits
// (snapshot.DefaultTimeout, then ErrLocked), and signals serve once it has
// the file open (seen in /proc): the answer must be "interrupted", not
// "snapshot locked" a second after the signal.
func TestServeInterruptedOpening(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command as a process of its own")
	}
	s, err := store.NewMap[string, uint64](store.MapOptions{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	s.Set("a", 1)
	snap := filepath.Join(t.TempDir(), "locked.snap")
	if err := s.Save(snap); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(snap, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	args := []string{"serve", "--snapshot", snap, "--addr", "127.0.0.1:0", "--workload", "none", "--quiet"}
	interruptCommand(t, "Ctrl-C while serve opens its snapshot", args, func(done <-chan error) {
		for !openedByOther(t, snap) {
			select {
			case err := <-done:
				t.Fatalf("serve ended before it opened its snapshot: %v", err)
			case <-time.After(time.Millisecond):
			}
		}
	})
}

// openedByOther reports whether a process other than this one has the
// file at path open.
func openedByOther(t *testing.T, path string) bool {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	self := strconv.Itoa(os.Getpid())
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil || p.Name() == self {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		for _, fd := range fds {
			if l, _ := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name())); l == path {
				return true
			}
		}
	}
	return false
}
