package measure

import "errors"

// The sentinel errors of the package.
var (
	// ErrConfig: a run was asked for something it cannot do (no cache, a
	// capacity below 1, no thread, a duration of zero).
	ErrConfig = errors.New("measure: bad configuration")
	// ErrWorkload: the workload spec cannot be read ("zipf", "trace:FILE",
	// ...); a file that cannot be read gives the workload package's error.
	ErrWorkload = errors.New("measure: bad workload")
)
