package workload

import (
	"bytes"
	"fmt"
	"io"
)

// NewKeys returns the requests of a key file read from r, as a stream: one
// read request a line, for the line as a string key. name labels the
// workload and its errors.
//
// A trailing carriage return is dropped and blank lines are skipped; other
// bytes, spaces included, belong to the key. A line holding a NUL byte is
// an ErrSyntax error: text files have none, so the input is most likely a
// binary file given by mistake. Each key read allocates its string.
func NewKeys(name string, r io.Reader) Workload[string] {
	return &keyFile{lines: newLines(name, r)}
}

type keyFile struct {
	lines *lines
}

func (k *keyFile) Name() string { return "keys:" + k.lines.name }

func (k *keyFile) Read(reqs []Request[string]) (int, error) {
	n := 0
	for n < len(reqs) {
		line, ok := k.lines.next()
		if !ok {
			break
		}
		if len(line) == 0 {
			continue
		}
		if bytes.IndexByte(line, 0) >= 0 {
			k.lines.fail(line, fmt.Errorf("%w: NUL byte (binary file?)", ErrSyntax))
			break
		}
		reqs[n] = Request[string]{Key: string(line)}
		n++
	}
	if n > 0 || len(reqs) == 0 {
		return n, nil
	}
	return 0, k.lines.err
}
