//go:build unix

package snapshot

import (
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// Create removes the temporary files of killed saves to the same path,
// but not one a live writer holds, nor those of other paths, nor files
// of the user's whose names merely start like a temporary file's.
func TestCreateRemovesStaleTemporaries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s[1].db") // glob characters in the name
	stale := path + ".tmp-0123456789ab"   // the names Create gives
	other := filepath.Join(dir, "other.db.tmp-0123456789ab")
	live := path + ".tmp-abcdef012345"
	// Files that only look alike are the user's, whatever their lock.
	mine := []string{path + ".tmp-notes", path + ".tmp-0123456789abc", path + ".tmp-0123456789AB"}
	for _, p := range append([]string{stale, other}, mine...) {
		if err := os.WriteFile(p, []byte("left by a killed save"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db, err := bolt.Open(live, 0o644, nil) // holds the exclusive lock
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	write(t, path, sampleEntries(3, 1))
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary file still there: %v", err)
	}
	for _, p := range append([]string{other, live}, mine...) {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}
