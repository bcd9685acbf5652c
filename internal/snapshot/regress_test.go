package snapshot

import (
	"path/filepath"
	"testing"
)

// Reproductions of specific failures, each forced where it happened by a
// test hook rather than waited for.

// A save that renames a new snapshot over the path while Open is reading
// it does not make Open fail: Open reads one file, the old or the new.
// The hook renames a larger snapshot into place right after Open's stat:
// were the size taken from a stat of the path while bbolt opened the path
// again, the new file's entries would be checked against the old file's
// size, and a sound snapshot reported corrupt ("N entries claimed, more
// than a file of M bytes holds"). Left to chance, the window is about one
// open in 20,000 while another process saves.
func TestOpenWhileReplaced(t *testing.T) {
	defer func() { testHook = nil }()
	path := filepath.Join(t.TempDir(), "s.db")
	write(t, path, sampleEntries(5, 50))
	big := sampleEntries(3000, 51)
	testHook = func(step, _ string) {
		if step == "stat" {
			testHook = nil
			write(t, path, big) // the save of another process
		}
	}
	_, got, err := read(path)
	if err != nil {
		t.Fatalf("a snapshot replaced as it was opened: %v", err)
	}
	if !sameEntries(got, big) {
		t.Fatalf("read %d entries, neither the old snapshot's 5 nor the new one's %d", len(got), len(big))
	}
}
