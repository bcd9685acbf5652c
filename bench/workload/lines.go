package workload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLine is the longest line, in bytes, that the readers accept; a longer
// one is reported as an ErrSyntax line error rather than read into memory
// without bound (a binary file has no newlines).
const MaxLine = 1 << 20

// lines reads an input line by line and numbers the lines.
type lines struct {
	name string
	sc   *bufio.Scanner
	n    int   // number of the line last returned
	err  error // sticky: io.EOF or the reason reading stopped
}

func newLines(name string, r io.Reader) *lines {
	src := &errReader{r: r}
	sc := bufio.NewScanner(src)
	// The scanner's limit counts the line ending too: room for "\r\n"
	// after MaxLine bytes, and next checks the line itself.
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine+2)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if atEOF && src.err != nil {
			// Reading failed: the bytes after the last newline are a
			// piece of a line (a truncated file), not a last line.
			// Return the whole lines still buffered, then the error.
			if bytes.IndexByte(data, '\n') < 0 {
				return 0, nil, src.err
			}
			atEOF = false
		}
		return bufio.ScanLines(data, atEOF)
	})
	return &lines{name: name, sc: sc}
}

// errReader keeps the first error other than io.EOF that r returns.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// next returns the next line without its line ending ("\n" or "\r\n"). The
// bytes are valid until the following call. At the end, or on a read error,
// it returns false and l.err says which.
func (l *lines) next() ([]byte, bool) {
	if l.err != nil {
		return nil, false
	}
	if !l.sc.Scan() {
		switch err := l.sc.Err(); {
		case err == nil:
			l.err = io.EOF
		case errors.Is(err, bufio.ErrTooLong):
			l.err = lineError(l.name, l.n+1, nil, fmt.Errorf("%w: longer than %d bytes", ErrSyntax, MaxLine))
		default:
			l.err = fmt.Errorf("workload: reading %s after line %d: %w", l.name, l.n, err)
		}
		return nil, false
	}
	l.n++
	line := l.sc.Bytes() // bufio.ScanLines has dropped one "\r" before the "\n"
	if len(line) > MaxLine {
		l.err = lineError(l.name, l.n, nil, fmt.Errorf("%w: longer than %d bytes", ErrSyntax, MaxLine))
		return nil, false
	}
	return line, true
}

// fail records and returns a line error for the line last returned.
func (l *lines) fail(text []byte, err error) error {
	l.err = lineError(l.name, l.n, text, err)
	return l.err
}

// isSpace reports whether c separates fields: a space or a tab.
func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// trimSpace drops leading and trailing spaces and tabs.
func trimSpace(b []byte) []byte {
	return bytes.TrimFunc(b, func(r rune) bool { return r == ' ' || r == '\t' })
}

// field splits off the first field of b (after leading spaces and tabs) and
// returns it and the rest.
func field(b []byte) (f, rest []byte) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	j := i
	for j < len(b) && !isSpace(b[j]) {
		j++
	}
	return b[i:j], b[j:]
}

// errNotNumber and errOverflow are the reasons parseUint gives; numberError
// turns them into a sentinel-wrapping error about a named field.
var (
	errNotNumber = errors.New("is not a decimal number")
	errOverflow  = errors.New("is above 2^64-1")
)

func numberError(field string, err error) error {
	if err == errOverflow {
		return fmt.Errorf("%w: %s %v", ErrRange, field, err)
	}
	return fmt.Errorf("%w: %s %v", ErrSyntax, field, err)
}

// parseUint parses a non-empty string of ASCII digits as a uint64. It does
// what strconv.ParseUint(string(b), 10, 64) does without converting b to a
// string, which would allocate for every line of a trace.
func parseUint(b []byte) (uint64, error) {
	if len(b) == 0 {
		return 0, errNotNumber
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, errNotNumber
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, errOverflow
		}
		v = v*10 + d
	}
	return v, nil
}
