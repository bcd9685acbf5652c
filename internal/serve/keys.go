package serve

import (
	"errors"
	"fmt"

	"github.com/twochoice/twochoice/bench/workload"
)

// Sentinel errors, for errors.Is.
var (
	// ErrKeys: the key file cannot be used.
	ErrKeys = errors.New("serve: bad key file")
	// ErrConfig: a Config that cannot be served.
	ErrConfig = errors.New("serve: bad configuration")
)

// ReadKeys reads a key file with workload.ReadKeyFile, the one reader of
// key files for every command that takes one (see the package doc for its
// rules). progress, if not nil, is told the fraction of the file read so
// far, now and then. A file with no key, or a line holding a NUL byte
// (most likely a binary file given by mistake) or longer than
// workload.MaxLine, is an error wrapping ErrKeys that names the file and
// the line.
func ReadKeys(path string, progress func(frac float64)) ([]string, error) {
	keys, err := workload.ReadKeyFile(path, progress)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeys, err)
	}
	return keys, nil
}
