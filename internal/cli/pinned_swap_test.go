package cli

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Replace writes into the directory it pinned, whatever a directory above
// it becomes meanwhile. Someone who may rename entries in a directory
// above the output's (shared here) can swap the output's directory (d)
// for a link to another (home) at any moment: checks made by name would
// then see one directory and a rename by name another, and the result
// would replace home's file of the same name, whatever it holds. A loop
// swapping the two with renameat2(RENAME_EXCHANGE) during "twochoice load"
// is such an attack; the schedules below make the swaps at fixed points
// instead: around TempDir and the writing of the result, and between
// Replace's checks and its rename (testHookReplace).
func TestPinnedReplaceDirectorySwapped(t *testing.T) {
	for _, c := range []struct {
		name       string
		swapAtTemp bool // d is swapped while TempDir runs and the result is written, then back
	}{
		{"swapped at the rename", false},
		{"swapped at TempDir and the rename", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			shared := filepath.Join(base, "shared")
			home := filepath.Join(base, "home")
			d := filepath.Join(shared, "d")
			evil := filepath.Join(shared, "evil")
			for _, dir := range []string{shared, home, d} {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(d, "out.snap")
			snapshotFile(t, path)
			victim := filepath.Join(home, "out.snap")
			if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(home, evil); err != nil {
				t.Skipf("no symbolic links here: %v", err)
			}
			// swap exchanges d and evil: d becomes the link to home, and
			// evil the directory d was; swapped again, they are back.
			swap := func() {
				t.Helper()
				x := filepath.Join(shared, "x")
				for _, r := range [][2]string{{d, x}, {evil, d}, {x, evil}} {
					if err := os.Rename(r[0], r[1]); err != nil {
						t.Fatal(err)
					}
				}
			}
			accept := func(target string) error {
				if b, err := os.ReadFile(target); err != nil || string(b) != "snapshot" {
					return errors.New("not a snapshot")
				}
				return nil
			}

			p, err := Pin(path)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if c.swapAtTemp {
				swap()
			}
			tmpDir, err := p.TempDir()
			if err == nil {
				err = os.WriteFile(filepath.Join(tmpDir, "out.snap"), []byte("result"), 0o644)
			}
			if c.swapAtTemp {
				swap()
			}
			if err == nil {
				testHookReplace = swap
				err = p.Replace(filepath.Join(tmpDir, "out.snap"), accept)
				testHookReplace = nil
			}
			t.Logf("TempDir and Replace: %v", err)
			if b, _ := os.ReadFile(victim); string(b) != "precious" {
				t.Errorf("%s holds %q: the result went into another directory than the one pinned", victim, b)
			}
			// The directory pinned is now named evil: the result is
			// there, or nowhere if Replace refused.
			if b, _ := os.ReadFile(filepath.Join(evil, "out.snap")); err == nil && string(b) != "result" {
				t.Errorf("Replace succeeded, but the pinned directory's out.snap holds %q", b)
			}
		})
	}
}
