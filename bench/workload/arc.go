package workload

import (
	"fmt"
	"io"
)

// NewARC returns the requests of an ARC trace read from r, as a stream: it
// holds one line at a time, however long the trace. name labels the
// workload and its errors.
//
// A line is "start count ignored request_number": fields separated by
// spaces or tabs, of which only the first two are read (both decimal, count
// at least 1). It stands for count read requests, for the blocks start,
// start+1, …, start+count-1 in that order. Blank lines are skipped. A
// trace stands for at most MaxARCRequests requests: a line whose count
// takes the trace's total past that is an ErrRange error, reported when
// the line is read, before any of its requests.
func NewARC(name string, r io.Reader) Workload[uint64] {
	return &arcTrace{lines: newLines(name, r)}
}

// MaxARCRequests bounds the requests an ARC trace may stand for, one
// line's count and all the lines' together. Twenty bytes of trace, "0
// 1000000000000 0 0", stand for 10^12 requests, which a reader that keeps
// them (the benchmark harness holds a whole trace in memory) would build
// before it could refuse them: 4.37 GB before the harness's own bound of
// 2^27 requests cut it short. The bound is the harness's, so that a trace
// it can hold is read whole here; the P12 trace has 13 million requests.
const MaxARCRequests = 1 << 27

type arcTrace struct {
	lines *lines
	next  uint64 // next block of the current line
	left  uint64 // requests of the current line not yet returned
	total uint64 // requests of the lines read so far, at most MaxARCRequests
}

func (a *arcTrace) Name() string { return "arc:" + a.lines.name }

func (a *arcTrace) Read(reqs []Request[uint64]) (int, error) {
	n := 0
	for n < len(reqs) {
		if a.left > 0 {
			m := uint64(len(reqs) - n)
			if a.left < m {
				m = a.left
			}
			out := reqs[n : n+int(m)]
			for i := range out {
				out[i] = Request[uint64]{Key: a.next + uint64(i)}
			}
			a.next += m
			a.left -= m
			n += int(m)
			continue
		}
		if !a.nextLine() {
			break
		}
	}
	if n > 0 {
		return n, nil
	}
	if len(reqs) == 0 {
		return 0, nil
	}
	return 0, a.lines.err
}

// nextLine parses the next non-blank line into a.next and a.left. It
// returns false at the end of the input or on an error, kept in a.lines.err.
func (a *arcTrace) nextLine() bool {
	for {
		line, ok := a.lines.next()
		if !ok {
			return false
		}
		f1, rest := field(line)
		if len(f1) == 0 {
			continue // blank line
		}
		f2, _ := field(rest)
		if len(f2) == 0 {
			a.lines.fail(line, fmt.Errorf("%w: want \"start count ...\"", ErrSyntax))
			return false
		}
		start, err := parseUint(f1)
		if err != nil {
			a.lines.fail(line, numberError("start block", err))
			return false
		}
		count, err := parseUint(f2)
		if err != nil {
			a.lines.fail(line, numberError("count", err))
			return false
		}
		if count == 0 {
			a.lines.fail(line, fmt.Errorf("%w: count is 0", ErrRange))
			return false
		}
		if start+(count-1) < start {
			a.lines.fail(line, fmt.Errorf("%w: last block past 2^64-1", ErrRange))
			return false
		}
		if count > MaxARCRequests-a.total {
			if count > MaxARCRequests {
				a.lines.fail(line, fmt.Errorf("%w: count %d is more than the %d requests a trace may stand for", ErrRange, count, MaxARCRequests))
			} else {
				a.lines.fail(line, fmt.Errorf("%w: count %d takes the trace past the %d requests it may stand for", ErrRange, count, MaxARCRequests))
			}
			return false
		}
		a.total += count
		a.next, a.left = start, count
		return true
	}
}
