//go:build unix

package snapshot

import (
	"os"
	"path/filepath"
	"syscall"
)

// removeStale removes the temporary files of saves to path that were
// killed before they could clean up. A temporary file that a live save is
// writing is open in bbolt, which holds an exclusive flock on it; a file
// whose lock can be taken has no writer left, and goes. Failures are
// ignored: a stale file costs disk space, never correctness.
func removeStale(path string) {
	names, _ := filepath.Glob(globEscape(path) + tmpMark + "*")
	for _, name := range names {
		if !isTemp(name, path) {
			continue
		}
		f, err := os.OpenFile(name, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.Remove(name)
		}
		f.Close() // releases the lock
	}
}
