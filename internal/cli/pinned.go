package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/twochoice/twochoice/internal/snapshot"
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
// links, as snapshot.Target finds it) and the target's directory; Replace
// puts the result there only if the path still leads to the same place,
// and holds nothing or a file that the caller's check accepts.
//
// A directory above the target's can change too, at any moment, if
// someone else may rename its entries: the target's directory swapped for
// a link to another one between a check made by name and a rename made by
// name would put the result in that other directory, over its file of the
// same name. So TempDir opens the target's directory (an os.Root, which
// holds it by descriptor), makes sure it is the one Pin saw, and from then
// on the temporary directory, the checks of what the target holds and the
// rename are made in it, not through the names above it. Close releases
// it.
type Pinned struct {
	path, target string
	dir          fs.FileInfo
	root         *os.Root // the target's directory, from TempDir or Replace on
}

// Pin records what path leads to now. The path need not exist; its
// directory (its target's, for a link) must.
func Pin(path string) (*Pinned, error) {
	target, err := snapshot.Target(path)
	if err != nil {
		return nil, err
	}
	dir, err := os.Stat(dirOf(target))
	if err != nil {
		return nil, err
	}
	return &Pinned{path: path, target: target, dir: dir}, nil
}

// Close releases the directory p holds open, if any.
func (p *Pinned) Close() error {
	if p.root == nil {
		return nil
	}
	err := p.root.Close()
	p.root = nil
	return err
}

// Target is the file Replace replaces: the path, or the file its links
// lead to.
func (p *Pinned) Target() string { return p.target }

// openDir opens the target's directory, once, and checks that it is the
// one Pin saw.
func (p *Pinned) openDir() (*os.Root, error) {
	if p.root != nil {
		return p.root, nil
	}
	dir := dirOf(p.target)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := root.Stat("."); err != nil || !os.SameFile(fi, p.dir) {
		root.Close()
		return nil, fmt.Errorf("%s %w: its directory %s was replaced", p.path, ErrChanged, dir)
	}
	p.root = root
	return root, nil
}

// TempDir creates a new directory in the target's, for the result to be
// written in before Replace moves it into place: beside the target, so
// that the rename stays on one file system, and readable and writable by
// this user alone, so that no one else can put a link or a file where the
// result is written. Its name is the target's followed by ".tmp-" and
// digits; the path returned leads to it through the target's directory.
// The caller removes it (RemoveTemp).
func (p *Pinned) TempDir() (string, error) {
	root, err := p.openDir()
	if err != nil {
		return "", err
	}
	base := filepath.Base(p.target)
	for range 100 {
		name := fmt.Sprintf("%s.tmp-%d", base, rand.Uint32())
		err := root.Mkdir(name, 0o700)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		// Not filepath.Join, which would clean a "link/.." that the
		// system resolves through the link (dirOf).
		return dirOf(p.target) + string(filepath.Separator) + name, nil
	}
	return "", fmt.Errorf("%s: no free name for a temporary directory", dirOf(p.target))
}

// RemoveTemp removes the directory TempDir made, and what is in it, in the
// target's directory.
func (p *Pinned) RemoveTemp(tmpDir string) error {
	root, err := p.openDir()
	if err != nil {
		return err
	}
	return root.RemoveAll(filepath.Base(tmpDir))
}

// Replace renames the file tmp, which is in the target's directory or in
// a directory TempDir made there, over the target, then syncs the
// target's directory, provided that the path still leads to the target
// through the same links, in the same directory, and that the target holds
// nothing or a regular file that accept, given the target's path, returns
// nil for; a symbolic link, a directory or any other kind of file is never
// replaced. accept is asked about any file there, the one there at Pin
// included: a file removed and another made in its place may get the same
// inode number, so that comparing the two would not tell them apart. A
// refusal wraps ErrChanged and leaves the target as it is. A file replaced
// passes its permission bits to tmp.
//
// The rename, and the checks of what the target holds, are made in the
// directory held open (see Pinned), so they concern the directory Pin saw
// whatever the names above it lead to meanwhile; the file accept examined
// by name must be the one found there, before and after. What changes in
// that directory itself in the microseconds between the checks and the
// rename is not seen: only those who may write to it can change it, and
// the rename replaces the name, never a file a link there points to.
func (p *Pinned) Replace(tmp string, accept func(target string) error) error {
	target, err := snapshot.Target(p.path)
	switch {
	case err != nil:
		return fmt.Errorf("%s %w: %w", p.path, ErrChanged, err)
	case target != p.target && p.target == p.path:
		return fmt.Errorf("%s %w: it is now a symbolic link to %s", p.path, ErrChanged, target)
	case target != p.target:
		return fmt.Errorf("%s %w: it now leads to %s, not %s", p.path, ErrChanged, target, p.target)
	}
	dirName := dirOf(target)
	if dir, err := os.Stat(dirName); err != nil || !os.SameFile(dir, p.dir) {
		return fmt.Errorf("%s %w: its directory %s was replaced", p.path, ErrChanged, dirName)
	}
	root, err := p.openDir()
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(dirName, tmp)
	if err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("%s is not in the directory of %s", tmp, target)
	}
	base := filepath.Base(target)
	fi, err := root.Lstat(base)
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
		// accept read the target by name: it must have read the file
		// found in the directory held, and that file must still be there.
		byName, err1 := os.Lstat(target)
		again, err2 := root.Lstat(base)
		if err1 != nil || err2 != nil || !os.SameFile(byName, fi) || !os.SameFile(again, fi) {
			return fmt.Errorf("%s %w while it was checked", target, ErrChanged)
		}
	}
	if testHookReplace != nil {
		testHookReplace()
	}
	if fi != nil {
		if err := root.Chmod(rel, fi.Mode().Perm()); err != nil {
			return err
		}
	}
	if err := root.Rename(rel, base); err != nil {
		return err
	}
	if err := syncRoot(root); err != nil {
		return fmt.Errorf("%s is %w (%w)", target, ErrNotDurable, err)
	}
	return nil
}

// dirOf returns the directory of path as written, without cleaning it,
// unlike filepath.Dir: in a link's target that symlink.Target joined to
// the link's directory, "link/.." means the parent of the directory the
// link leads to, as the system resolves it, not the directory the link is
// in.
func dirOf(path string) string {
	vol := filepath.VolumeName(path)
	rest := path[len(vol):]
	i := len(rest) - 1
	for i >= 0 && !os.IsPathSeparator(rest[i]) {
		i--
	}
	switch {
	case i < 0:
		return vol + "."
	case i == 0:
		return vol + rest[:1]
	}
	return vol + rest[:i]
}

// testHookReplace, if set, runs between Replace's checks and its changes.
var testHookReplace func()

// syncRoot makes the renames in root's directory durable.
func syncRoot(root *os.Root) error {
	d, err := root.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
