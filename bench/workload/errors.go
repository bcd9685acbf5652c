package workload

import (
	"errors"
	"fmt"
)

// The sentinel errors of the package. Every error a reader or constructor
// returns for bad input wraps one of them, so errors.Is tells the cause.
var (
	// ErrSyntax: a line is not in the input's format.
	ErrSyntax = errors.New("workload: malformed line")
	// ErrRange: a number is out of range (a count of zero, a block number
	// past 2^64-1, an ARC trace past MaxARCRequests requests, a
	// generator's key past its table of names).
	ErrRange = errors.New("workload: value out of range")
	// ErrWeight: a weighted key's weight is not a finite number ≥ 0, or the
	// weights sum to zero.
	ErrWeight = errors.New("workload: bad weight")
	// ErrDuplicate: a weighted key file lists a key twice.
	ErrDuplicate = errors.New("workload: duplicate key")
	// ErrEmpty: an input that must hold keys holds none.
	ErrEmpty = errors.New("workload: no keys")
	// ErrCorrupt: compressed input cannot be decompressed (corrupt or
	// truncated, or its window is larger than MaxWindow).
	ErrCorrupt = errors.New("workload: corrupt compressed input")
	// ErrParam: a generator was given a parameter outside its domain.
	ErrParam = errors.New("workload: bad parameter")
)

// A LineError reports a bad line of an input. It wraps one of the sentinel
// errors, so errors.Is(err, ErrSyntax) holds for a malformed line.
type LineError struct {
	Name string // the input's name, usually a file name
	Line int    // 1-based line number
	Text string // the line, cut to 60 bytes
	Err  error  // a sentinel error, possibly wrapped with detail
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: %v: %q", e.Name, e.Line, e.Err, e.Text)
}

func (e *LineError) Unwrap() error { return e.Err }

// lineError makes a *LineError, copying at most 60 bytes of text.
func lineError(name string, line int, text []byte, err error) *LineError {
	const max = 60
	s := string(text[:min(len(text), max)])
	if len(text) > max {
		s += "…"
	}
	return &LineError{Name: name, Line: line, Text: s, Err: err}
}
