package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/twochoice/twochoice/bench/workload"
	"github.com/twochoice/twochoice/internal/cli"
	"github.com/twochoice/twochoice/internal/snapshot"
	"github.com/twochoice/twochoice/store"
)

// checkSnapshotOut checks, before any work, that a snapshot can be written
// to out (its directory exists and takes a new file: found only at the
// save, a missing or read-only directory would throw the work away) and
// that writing it cannot destroy data: out must not be one of the
// command's inputs, and may replace only a file that is already a
// twochoice snapshot (which snapshot.Open, the reader inspect uses,
// recognizes). A name that does not exist yet is fine. A damaged snapshot
// is refused as well: the user can remove it, and we cannot tell it from
// someone else's bbolt file; so is one that another process holds open
// for writing. It returns out pinned (cli.Pin) as it was checked, for
// saveSnapshot.
func checkSnapshotOut(out string, inputs ...string) (*cli.Pinned, error) {
	if err := checkOutDir(out); err != nil {
		return nil, err
	}
	pin, err := cli.Pin(out)
	if err != nil {
		return nil, fmt.Errorf("%w: --out %s: %w", errUsage, out, err)
	}
	fi, err := os.Stat(out)
	if errors.Is(err, os.ErrNotExist) {
		return pin, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: --out %s: %w", errUsage, out, err)
	}
	for _, in := range inputs {
		stat := os.Stat
		if in == workload.StdinPath {
			// "load --keys - --out k.snap < k.snap" reads the file it
			// is about to replace.
			stat = func(string) (os.FileInfo, error) { return os.Stdin.Stat() }
		}
		if ii, err := stat(in); err == nil && os.SameFile(fi, ii) {
			return nil, fmt.Errorf("%w: --out %s is the input file %s", errUsage, out, workload.InputName(in))
		}
	}
	if err := replaceable(out); err != nil {
		return nil, fmt.Errorf("%w: --out %w", errUsage, err)
	}
	return pin, nil
}

// replaceable reports whether the file at path is a snapshot that a save
// may replace: one that snapshot.Open reads, or one of a later format,
// and that no other process is writing.
func replaceable(path string) error {
	r, err := snapshot.Open(path, 0)
	switch {
	case err == nil:
		return r.Close()
	case errors.Is(err, snapshot.ErrNewerVersion):
		return nil // a snapshot still, of a later format
	case errors.Is(err, snapshot.ErrLocked):
		// A file another process is writing: "remove it" would be the
		// wrong advice.
		return fmt.Errorf("%s is open for writing in another process; let it finish or pick another name (%w)", path, err)
	}
	return fmt.Errorf("%s exists and is not a snapshot that can be replaced; remove it or pick another name (%w)", path, err)
}

// saveSnapshot saves s to out, which checkSnapshotOut pinned: into a
// private directory beside the file out leads to (cli.Pinned.TempDir),
// then, if out still leads there through the same links and holds no
// file or one that is still a snapshot to replace (replaceable, the check
// made before the load), renamed over it (cli.Pinned.Replace), in the
// directory held open since the temporary one was made, whatever the
// directories above it are renamed to meanwhile. The check
// is made again at the rename: a symbolic link put at out during a load
// of 1.5 s, to a text file, had the save replace the text file with a
// 145 MB snapshot. Now the save fails, says why, and leaves the file
// alone. The store's own Save could not make the check:
// it follows a link at out when it starts, and renames at its end.
// Ctrl-C abandons the save until the snapshot is complete, as
// Store.SaveContext does; the directory is removed whatever happens.
// Errors name out where Save's named the file in that directory.
func saveSnapshot(ctx context.Context, s *store.Map[string, uint64], out string, pin *cli.Pinned, progress func(done, total uint64)) error {
	defer pin.Close()
	dir, err := pin.TempDir()
	if errors.Is(err, cli.ErrChanged) {
		return fmt.Errorf("--out %w; the snapshot was not saved", err)
	}
	if err != nil {
		return fmt.Errorf("snapshot %s: %w (%w)", out, store.ErrWrite, err)
	}
	defer pin.RemoveTemp(dir)
	// Not filepath.Join, which would clean a "link/.." in dir that the
	// system resolves through the link.
	tmp := dir + string(filepath.Separator) + filepath.Base(pin.Target())
	// ErrNotDurable: the file is complete, and its directory is about to
	// be left; the sync that matters is that of the directory it goes to.
	if err := s.SaveContext(ctx, tmp, progress); err != nil && !errors.Is(err, store.ErrNotDurable) {
		return &renamedError{strings.ReplaceAll(err.Error(), tmp, out), err}
	}
	err = pin.Replace(tmp, replaceable)
	switch {
	case errors.Is(err, cli.ErrChanged):
		return fmt.Errorf("--out %w; the snapshot was not saved", err)
	case errors.Is(err, cli.ErrNotDurable):
		return fmt.Errorf("snapshot %s: %w: %w", out, store.ErrNotDurable, err)
	case err != nil:
		return &renamedError{fmt.Sprintf("snapshot %s: %v", out, strings.ReplaceAll(err.Error(), tmp, out)), err}
	}
	return nil
}

// renamedError is an error whose message names the file the user asked
// for in place of the temporary file it was about, with the error itself
// kept underneath for errors.Is.
type renamedError struct {
	msg string
	err error
}

func (e *renamedError) Error() string { return e.msg }
func (e *renamedError) Unwrap() error { return e.err }

// checkOutDir checks that a file can be created beside out (beside the
// file it links to, if it is a symbolic link), as Save's temporary file
// will be, by creating and removing one.
func checkOutDir(out string) error {
	target, err := snapshot.Target(out)
	if err != nil {
		return fmt.Errorf("%w: --out %s: %w", errUsage, out, err)
	}
	if err := cli.WritableDir(filepath.Dir(target)); err != nil {
		return fmt.Errorf("%w: --out %s: %w", errUsage, out, err)
	}
	return nil
}
