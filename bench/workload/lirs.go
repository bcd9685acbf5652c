package workload

import "io"

// NewLIRS returns the requests of a LIRS trace read from r, as a stream.
// name labels the workload and its errors.
//
// A line holds one block number, in decimal, with optional spaces or tabs
// around it; each is one read request. Blank lines and lines holding only
// "*" (which the LIRS authors' files use as markers) are skipped.
func NewLIRS(name string, r io.Reader) Workload[uint64] {
	return &lirsTrace{lines: newLines(name, r)}
}

type lirsTrace struct {
	lines *lines
}

func (t *lirsTrace) Name() string { return "lirs:" + t.lines.name }

func (t *lirsTrace) Read(reqs []Request[uint64]) (int, error) {
	n := 0
	for n < len(reqs) {
		line, ok := t.lines.next()
		if !ok {
			break
		}
		b := trimSpace(line)
		if len(b) == 0 || (len(b) == 1 && b[0] == '*') {
			continue
		}
		k, err := parseUint(b)
		if err != nil {
			t.lines.fail(line, numberError("block", err))
			break
		}
		reqs[n] = Request[uint64]{Key: k}
		n++
	}
	if n > 0 || len(reqs) == 0 {
		return n, nil
	}
	return 0, t.lines.err
}
