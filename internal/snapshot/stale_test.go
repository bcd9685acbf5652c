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

// Two saves to the same path at once both succeed (the last rename wins),
// whenever the second one's stale-file cleanup runs: it removes only
// files whose lock it can take, and a live save holds its temporary
// file's lock from the moment it can be seen to be its own until the
// rename. Two Writers in one process stand for two processes: flock locks
// belong to open files, so they exclude each other here too.
//
// The hooks put the second save's cleanup in the two windows where an
// unlocked file would be taken for a stale one: between bbolt's Close and
// the rename (the file's sync, which can take seconds), where the first
// save would fail with ErrWrite; and between bbolt's creating the file and
// locking it, where the first save would go on writing a file no longer in
// the directory, to fail at the rename.
func TestConcurrentSaves(t *testing.T) {
	defer func() { testHook = nil }()
	path := filepath.Join(t.TempDir(), "s.db")
	write(t, path, sampleEntries(5, 40))
	second := sampleEntries(7, 42)
	// At the rename: another save starts, and runs its cleanup.
	testHook = func(step, tmp string) {
		if step != "rename" {
			return
		}
		testHook = nil
		write(t, path, second)
	}
	first := sampleEntries(6, 41)
	write(t, path, first)
	if _, got, err := read(path); err != nil || !sameEntries(got, first) {
		t.Fatalf("the last save to rename: %v", err)
	}
	// Between the creation of the temporary file and its lock: a cleanup
	// that found it unlocked removed it (done here by hand, since the
	// window is inside bbolt.Open).
	removed := 0
	testHook = func(step, tmp string) {
		if step == "opened" && removed == 0 {
			removed++
			os.Remove(tmp)
		}
	}
	third := sampleEntries(8, 43)
	write(t, path, third)
	if _, got, err := read(path); err != nil || !sameEntries(got, third) {
		t.Fatalf("a save whose first temporary file was removed: %v", err)
	}
	if left, _ := filepath.Glob(path + ".tmp-*"); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
