//go:build unix

package snapshot

import (
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// Create removes the temporary files of killed saves to the same path,
// but not one a live writer holds, nor those of other paths.
func TestCreateRemovesStaleTemporaries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s[1].db") // glob characters in the name
	stale := path + ".tmp-dead"
	other := filepath.Join(dir, "other.db.tmp-dead")
	live := path + ".tmp-live"
	for _, p := range []string{stale, other} {
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
	for _, p := range []string{other, live} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}
