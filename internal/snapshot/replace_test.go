package snapshot

import (
	"path/filepath"
	"testing"
)

// A save that renames a new snapshot over the path while Open is reading
// it does not make Open fail: Open reads one file, the old or the new.
//
// Open used to take the file's size from a stat of the path, and let bbolt
// open the path again: when a save renamed a larger snapshot into place
// between the two, the new file's entries were checked against the old
// file's size, and a sound snapshot was reported corrupt ("N entries
// claimed, more than a file of M bytes holds"). A process that opened a
// snapshot while another saved to it saw this about once in 20,000 opens.
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
