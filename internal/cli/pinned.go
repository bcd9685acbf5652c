package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/twochoice/twochoice/internal/symlink"
)

// ErrChanged is wrapped by Replace's error when the output path no longer
// names what it named when it was pinned.
var ErrChanged = errors.New("changed since it was checked")

// ErrNotDurable is wrapped by Replace's error when the new file is in
// place but syncing its directory failed: a power loss may still bring
// back what was there before.
var ErrNotDurable = errors.New("in place, but its directory could not be synced")

// A Pinned output is a path that a command checked before long work, and
// that the work's result is to replace as it was then. In between (a load
// takes seconds) the path can come to name something else: a symbolic
// link put in its place would otherwise lead the result onto whatever file
// it points to. Pin records where the path leads (its target, through its
// links, as symlink.Target finds it) and the target's directory; Replace
// puts the result there only if the path still leads to the same place,
// and holds nothing or a file that the caller's check accepts.
type Pinned struct {
	path, target string
	dir          fs.FileInfo
}

// Pin records what path leads to now. The path need not exist; its
// directory (its target's, for a link) must.
func Pin(path string) (*Pinned, error) {
	target, err := symlink.Target(path)
	if err != nil {
		return nil, err
	}
	dir, err := os.Stat(filepath.Dir(target))
	if err != nil {
		return nil, err
	}
	return &Pinned{path: path, target: target, dir: dir}, nil
}

// Close releases what p holds.
func (p *Pinned) Close() error { return nil }

// Target is the file Replace replaces: the path, or the file its links
// lead to.
func (p *Pinned) Target() string { return p.target }

// TempDir creates a new directory beside the target, for the result to be
// written in before Replace moves it into place: beside it, so that the
// rename stays on one file system, and readable and writable by this user
// alone (os.MkdirTemp), so that no one else can put a link or a file where
// the result is written. Its name is the target's followed by ".tmp-" and
// digits. The caller removes it.
func (p *Pinned) TempDir() (string, error) {
	return os.MkdirTemp(filepath.Dir(p.target), filepath.Base(p.target)+".tmp-")
}

// Replace renames the file tmp over the target, then syncs the target's
// directory, provided that the path still leads to the target through the
// same links, in the same directory, and that the target holds nothing or
// a regular file that accept, given the target's path, returns nil for; a
// symbolic link, a directory or any other kind of file is never replaced.
// accept is asked about any file there, the one there at Pin included: a
// file removed and another made in its place may get the same inode
// number, so that comparing the two would not tell them apart. A refusal
// wraps ErrChanged and leaves the target as it is. A file replaced passes
// its permission bits to tmp.
//
// The checks are made just before the rename, by name: what changes in
// the microseconds between them and the rename is not seen. They are
// meant for the seconds of work between Pin and Replace.
func (p *Pinned) Replace(tmp string, accept func(target string) error) error {
	target, err := symlink.Target(p.path)
	switch {
	case err != nil:
		return fmt.Errorf("%s %w: %w", p.path, ErrChanged, err)
	case target != p.target && p.target == p.path:
		return fmt.Errorf("%s %w: it is now a symbolic link to %s", p.path, ErrChanged, target)
	case target != p.target:
		return fmt.Errorf("%s %w: it now leads to %s, not %s", p.path, ErrChanged, target, p.target)
	}
	if dir, err := os.Stat(filepath.Dir(target)); err != nil || !os.SameFile(dir, p.dir) {
		return fmt.Errorf("%s %w: its directory %s was replaced", p.path, ErrChanged, filepath.Dir(target))
	}
	fi, err := os.Lstat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fi = nil // nothing to replace: it was never there, or was removed
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s %w: it is now a symbolic link", target, ErrChanged)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s %w: it is now %v, not a regular file", target, ErrChanged, fi.Mode().Type())
	default:
		if err := accept(target); err != nil {
			return fmt.Errorf("%s %w: %w", target, ErrChanged, err)
		}
	}
	if testHookReplace != nil {
		testHookReplace()
	}
	if fi != nil {
		if err := os.Chmod(tmp, fi.Mode().Perm()); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, target); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(target)); err != nil {
		return fmt.Errorf("%s is %w (%w)", target, ErrNotDurable, err)
	}
	return nil
}

// testHookReplace, if set, runs between Replace's checks and its changes.
var testHookReplace func()

// syncDir makes the renames in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
