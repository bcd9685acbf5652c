package cli

import (
	"fmt"
	"os"
)

// WritableDir reports whether a new file can be created in dir, before
// the work whose result will be written there: dir exists, is a
// directory, and takes a file (a probe file is created and removed, since
// permission bits do not tell, for root or on a read-only mount). The
// error is the file system's, or says which of these failed; callers add
// what they were about to write.
func WritableDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	f, err := os.CreateTemp(dir, ".twochoice-probe-*")
	if err != nil {
		// The probe's name would only puzzle: "cannot write in d: open
		// d/.twochoice-probe-2510569322: permission denied".
		return fmt.Errorf("cannot write in %s: %w", dir, unwrapPath(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}
