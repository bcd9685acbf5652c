//go:build unix

package snapshot

import (
	"os"
	"path/filepath"
	"syscall"
)

// removeStale removes the temporary files of saves to path that were
// killed before they could clean up. A temporary file that a live save is
// writing is open in bbolt, which holds an exclusive flock on it from
// just after creating it until after its rename (see finishLocked); a
// file whose lock can be taken has no writer left, and goes. In the one
// moment a live save's file is unlocked, between its creation and bbolt's
// lock, it may go too: the save sees that its locked file is no longer at
// its name and starts again under another (Writer.open). So a save at the
// same time as another never fails for it. Failures are ignored: a stale
// file costs disk space, never correctness.
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

// finishLocked: Commit cuts, syncs and renames the temporary file while
// bbolt still holds it open, and so locked, so that removeStale in another
// save never finds a live save's file unlocked.
const finishLocked = true
