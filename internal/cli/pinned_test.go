package cli

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Replace puts the result in place when the path still leads where it
// led at Pin, and refuses, leaving what is there, when it does not.
func TestPinnedReplace(t *testing.T) {
	// accept takes what snapshot writes, as load's check takes a snapshot.
	accept := func(target string) error {
		if b, err := os.ReadFile(target); err != nil || string(b) != "snapshot" {
			return errors.New("not a snapshot")
		}
		return nil
	}
	replaced := func(by func(*testing.T, string)) func(*testing.T, string) {
		return func(t *testing.T, p string) { remove(t, p); by(t, p) }
	}
	for _, c := range []struct {
		name    string
		before  func(t *testing.T, path string) // what path is at Pin
		between func(t *testing.T, path string) // what happens to it until Replace
		changed bool                            // Replace refuses with ErrChanged
	}{
		{"absent, absent", nil, nil, false},
		{"a snapshotFile, the same", snapshotFile, nil, false},
		{"a snapshotFile, removed", snapshotFile, remove, false},
		{"a snapshotFile, another", snapshotFile, replaced(snapshotFile), false},
		{"absent, a snapshot", nil, snapshotFile, false},
		{"absent, a text file", nil, file, true},
		// Made right after the removal, the file may take the
		// snapshot's inode number.
		{"a snapshotFile, a text file", snapshotFile, replaced(file), true},
		{"absent, a link", nil, link, true},
		{"a snapshotFile, a link", snapshotFile, replaced(link), true},
		{"absent, a directory", nil, func(t *testing.T, p string) { os.Mkdir(p, 0o755) }, true},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.snap")
		if c.before != nil {
			c.before(t, path)
		}
		p, err := Pin(path)
		if err != nil {
			t.Fatalf("%s: Pin: %v", c.name, err)
		}
		if c.between != nil {
			c.between(t, path)
		}
		before, _ := os.Lstat(path)
		tmpDir, err := p.TempDir()
		if err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(tmpDir, "out.snap")
		if err := os.WriteFile(tmp, []byte("result"), 0o644); err != nil {
			t.Fatal(err)
		}
		err = p.Replace(tmp, accept)
		if c.changed != errors.Is(err, ErrChanged) || !c.changed && err != nil {
			t.Errorf("%s: Replace: %v; want ErrChanged %v", c.name, err, c.changed)
		}
		after, _ := os.Lstat(path)
		if c.changed {
			if (before == nil) != (after == nil) || before != nil && !os.SameFile(before, after) {
				t.Errorf("%s: a refused Replace changed the path", c.name)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "target.txt")); err == nil && string(b) != "precious" {
				t.Errorf("%s: the link's target holds %q", c.name, b)
			}
		} else if got, _ := os.ReadFile(path); string(got) != "result" {
			t.Errorf("%s: the path holds %q, want the result", c.name, got)
		}
		os.RemoveAll(tmpDir)
	}

	// A file replaced gives the result its permission bits.
	path := filepath.Join(t.TempDir(), "private.snap")
	if err := os.WriteFile(path, []byte("snapshot"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Pin(path)
	if err != nil {
		t.Fatal(err)
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.Replace(tmp, accept); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the replaced file's successor: %v, %v; want mode 0600", fi.Mode(), err)
	}
}

func snapshotFile(t *testing.T, path string) {
	if err := os.WriteFile(path, []byte("snapshot"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func file(t *testing.T, path string) {
	if err := os.WriteFile(path, []byte("someone's"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, path string) {
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// link makes path a link to a text file beside it.
func link(t *testing.T, path string) {
	target := filepath.Join(filepath.Dir(path), "target.txt")
	if err := os.WriteFile(target, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// A target reached through a link whose destination climbs with ".." is
// replaced where the system resolves it: "lnk/../target.snap", with lnk a
// link to real/a/b, is real/a/target.snap, not ./target.snap.
func TestPinnedReplaceThroughLinkedParent(t *testing.T) {
	base := t.TempDir()
	b := filepath.Join(base, "real", "a", "b")
	if err := os.MkdirAll(b, 0o755); err != nil {
		t.Fatal(err)
	}
	lnk := filepath.Join(base, "lnk")
	if err := os.Symlink(b, lnk); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if err := os.Symlink(".."+string(filepath.Separator)+"target.snap", filepath.Join(b, "out.snap")); err != nil {
		t.Fatal(err)
	}
	p, err := Pin(filepath.Join(lnk, "out.snap"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tmpDir, err := p.TempDir()
	if err != nil {
		t.Fatal(err)
	}
	tmp := tmpDir + string(filepath.Separator) + "target.snap"
	if err := os.WriteFile(tmp, []byte("result"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.Replace(tmp, func(string) error { return nil }); err != nil {
		t.Fatalf("Replace: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(base, "real", "a", "target.snap")); err != nil || string(got) != "result" {
		t.Errorf("real/a/target.snap: %q, %v; want the result", got, err)
	}
	if _, err := os.Lstat(filepath.Join(base, "target.snap")); err == nil {
		t.Errorf("the result went to %s, beside lnk", filepath.Join(base, "target.snap"))
	}
	if err := p.RemoveTemp(tmpDir); err != nil {
		t.Error(err)
	}
}
