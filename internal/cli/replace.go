package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"

	"github.com/twochoice/twochoice/internal/snapshot"
)

// ReplaceFile writes data to path, whole or not at all: to a temporary
// file beside path (beside the file path links to, if it is a link),
// synced, which then replaces path. A write that fails (a full disk)
// leaves a file already at path as it was, instead of truncated or half
// written and looking complete, and removes the temporary file. A new
// file gets 0666 less the umask, as os.Create gives; a replaced one keeps
// its permission bits. An existing path that is not a regular file (a
// directory, a named pipe, a device) is refused: the rename would put a
// regular file in its place. Errors name path, never the temporary file.
func ReplaceFile(path string, data []byte) error {
	target := LinkTarget(path)
	perm, keep := fs.FileMode(0o666), false
	if fi, err := os.Stat(target); err == nil {
		if err := Regular(path, fi); err != nil {
			return err
		}
		perm, keep = fi.Mode().Perm(), true
	}
	f, err := createTemp(target, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	_, err = f.Write(data)
	if err == nil && keep {
		err = f.Chmod(perm) // the umask may have taken bits at the create
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), target)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	return nil
}

// Regular reports, for fi, what path names (or links to), whether it is
// a regular file that ReplaceFile may replace.
func Regular(path string, fi fs.FileInfo) error {
	switch {
	case fi.IsDir():
		return fmt.Errorf("%s is a directory", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file (%v)", path, fi.Mode().Type())
	}
	return nil
}

// LinkTarget is the file ReplaceFile replaces, whose directory must take
// its temporary file: snapshot.Target's answer, or path itself where that
// fails (a link that cannot be read, a loop), for the write to meet the
// error there.
func LinkTarget(path string) string {
	if t, err := snapshot.Target(path); err == nil {
		return t
	}
	return path
}

// createTemp creates a new file beside target, with perm less the umask.
func createTemp(target string, perm fs.FileMode) (*os.File, error) {
	for {
		name := fmt.Sprintf("%s.tmp-%016x", target, rand.Uint64())
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
}

// unwrapPath drops the temporary file's name from a *fs.PathError, so that
// the message names the file written alone.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
