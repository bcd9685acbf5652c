package workload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
)

// sniffSize is how far OpenTrace reads ahead for the line that tells the
// format.
const sniffSize = 64 << 10

// OpenTrace opens a block trace, compressed or not (see [Open]), and tells
// its format from its first line that is not blank or "*": two or more
// fields make it an ARC trace ([NewARC]), one a LIRS trace ([NewLIRS]). A
// file with no such line is an ErrEmpty error; one whose first 64 KiB hold
// none, an ErrSyntax error. The workload is named after the file's base
// name.
func OpenTrace(path string) (*File[uint64], error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(r, sniffSize)
	arc, err := sniffARC(br)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("%w (%s)", err, InputName(path)), r.Close())
	}
	name := filepath.Base(InputName(path))
	if arc {
		return &File[uint64]{NewARC(name, br), r}, nil
	}
	return &File[uint64]{NewLIRS(name, br), r}, nil
}

// sniffARC looks ahead, consuming nothing, for the first line that is not
// blank or "*" and reports whether it has two or more fields.
func sniffARC(br *bufio.Reader) (bool, error) {
	buf, err := br.Peek(sniffSize)
	atEOF := err == io.EOF
	if err != nil && !atEOF {
		if !errors.Is(err, ErrCorrupt) {
			err = fmt.Errorf("workload: %w", err)
		}
		return false, err
	}
	for len(buf) > 0 {
		line := buf
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			line, buf = buf[:i], buf[i+1:]
		} else if !atEOF {
			break // a line longer than the look-ahead
		} else {
			buf = nil
		}
		b := trimSpace(bytes.TrimSuffix(line, []byte("\r")))
		if len(b) == 0 || (len(b) == 1 && b[0] == '*') {
			continue
		}
		_, rest := field(b)
		f2, _ := field(rest)
		return len(f2) > 0, nil
	}
	if atEOF {
		return false, fmt.Errorf("%w: no request in the trace", ErrEmpty)
	}
	return false, fmt.Errorf("%w: no request in the first %d KiB", ErrSyntax, sniffSize>>10)
}
