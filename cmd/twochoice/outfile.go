package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/twochoice/twochoice/bench/workload"
	"github.com/twochoice/twochoice/internal/cli"
	"github.com/twochoice/twochoice/internal/snapshot"
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
// for writing.
func checkSnapshotOut(out string, inputs ...string) error {
	if err := checkOutDir(out); err != nil {
		return err
	}
	fi, err := os.Stat(out)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: --out %s: %w", errUsage, out, err)
	}
	for _, in := range inputs {
		stat := os.Stat
		if in == workload.StdinPath {
			// "load --keys - --out k.snap < k.snap" reads the file it
			// is about to replace.
			stat = func(string) (os.FileInfo, error) { return os.Stdin.Stat() }
		}
		if ii, err := stat(in); err == nil && os.SameFile(fi, ii) {
			return fmt.Errorf("%w: --out %s is the input file %s", errUsage, out, workload.InputName(in))
		}
	}
	r, err := snapshot.Open(out, 0)
	switch {
	case err == nil:
		return r.Close()
	case errors.Is(err, snapshot.ErrNewerVersion):
		return nil // a snapshot still, of a later format
	case errors.Is(err, snapshot.ErrLocked):
		// A file another process is writing: "remove it" would be the
		// wrong advice.
		return fmt.Errorf("%w: --out %s is open for writing in another process; let it finish or pick another name (%w)", errUsage, out, err)
	}
	return fmt.Errorf("%w: --out %s exists and is not a snapshot that can be replaced; remove it or pick another name (%w)", errUsage, out, err)
}

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
