package snapshot

// Symbolic links: a snapshot written to a path that is a symbolic link
// replaces the file the link leads to, and the link stays a link. The
// command line's whole-file writes (internal/cli) follow links the same
// way, through Target.

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// maxLinks is how many symbolic links Target follows, as Linux's path
// resolution does (MAXSYMLINKS).
const maxLinks = 40

// Target returns the file a write to path replaces: path itself, or,
// while it is a symbolic link, the file the link points to. That file
// need not exist (a dangling link gets its target created; following only
// links that lead somewhere, as filepath.EvalSymlinks does, would replace
// a dangling link with the file). A relative link is relative to the
// link's directory, left uncleaned so that ".." means what it means to
// the system when that directory is itself reached through a link. More
// than maxLinks links is an error wrapping syscall.ELOOP.
func Target(path string) (string, error) {
	for range maxLinks {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil // a file, nothing yet, or an error the write will meet
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Dir(path) + string(filepath.Separator) + dest
		}
		path = dest
	}
	return "", &fs.PathError{Op: "following links", Path: path, Err: syscall.ELOOP}
}
