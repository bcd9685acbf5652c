//go:build unix

package snapshot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A save to a symbolic link replaces the file the link points to and keeps
// the link, as editors and cp do: the temporary file is written beside the
// target (so the rename stays on the target's file system) and renamed
// over it, rather than replacing the link itself with a regular file and
// leaving the file it points to stale.
func TestSaveThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir() // the target in another directory
	target := filepath.Join(other, "real.db")
	write(t, target, sampleEntries(10, 20))
	if err := os.Chmod(target, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.db")
	chain := filepath.Join(dir, "chain.db") // a link to the link, relative
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("link.db", chain); err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{link, chain} {
		w, err := Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(w.tmp) != other {
			t.Errorf("%s: the temporary file %s is not beside the target", p, w.tmp)
		}
		w.Abort()
		es := sampleEntries(20+i, uint64(21+i))
		write(t, p, es)
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("saving to %s replaced the link: %v, %v", p, fi.Mode(), err)
		}
		if _, got, err := read(target); err != nil || !sameEntries(got, es) {
			t.Fatalf("saving to %s did not replace its target: %v", p, err)
		}
		if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("the target's permissions: %v, %v", fi.Mode(), err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(other, "*.tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	// A link whose target does not exist yet: the target is created.
	dangling := filepath.Join(dir, "dangling.db")
	os.Symlink(filepath.Join(other, "new.db"), dangling)
	es := sampleEntries(5, 23)
	write(t, dangling, es)
	if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the dangling link was replaced: %v", err)
	}
	if _, got, err := read(filepath.Join(other, "new.db")); err != nil || !sameEntries(got, es) {
		t.Fatalf("the dangling link's target: %v", err)
	}
	// A link to a directory, and a loop of links: ErrWrite, nothing
	// written.
	toDir := filepath.Join(dir, "todir.db")
	os.Symlink(other, toDir)
	loop := filepath.Join(dir, "loop.db")
	os.Symlink("loop.db", loop)
	for _, p := range []string{toDir, loop} {
		if w, err := Create(p); !errors.Is(err, ErrWrite) {
			if w != nil {
				w.Abort()
			}
			t.Errorf("Create(%s): %v, want ErrWrite", p, err)
		}
	}
	if _, err := Create(loop); !errors.Is(err, syscall.ELOOP) {
		t.Errorf("a loop of links: %v, want ELOOP", err)
	}
}
