package workload

import (
	"fmt"
	"io"
)

// Op is the kind of a request.
type Op uint8

const (
	// Read looks a key up. In a hit-ratio run a read that misses inserts
	// the key, as a cache in front of a slower store would.
	Read Op = iota
	// Write sets a key's value whether or not it is cached.
	Write
)

// String returns "read" or "write".
func (o Op) String() string {
	switch o {
	case Read:
		return "read"
	case Write:
		return "write"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Request is one access to a key.
type Request[K comparable] struct {
	Key K
	Op  Op
}

// A Workload is a stream of requests for keys of type K.
//
// Read fills reqs with the next requests and returns how many it wrote:
// either n > 0 and a nil error, or 0 and a non-nil error (io.EOF at the end
// of a finite stream). An empty reqs gets 0 and a nil error. After an error
// every later Read returns the same error.
//
// Name describes the stream for reports, with every parameter needed to
// replay it (a generator's seed, for example).
//
// A Workload is not safe for concurrent use.
type Workload[K comparable] interface {
	Name() string
	Read(reqs []Request[K]) (n int, err error)
}

// Limit returns a workload of the first n requests of w.
func Limit[K comparable](w Workload[K], n int64) Workload[K] {
	return &limited[K]{w: w, n: n, left: n}
}

type limited[K comparable] struct {
	w       Workload[K]
	n, left int64
}

func (l *limited[K]) Name() string { return fmt.Sprintf("%s,requests=%d", l.w.Name(), l.n) }

func (l *limited[K]) Read(reqs []Request[K]) (int, error) {
	if l.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(reqs)) > l.left {
		reqs = reqs[:l.left]
	}
	n, err := l.w.Read(reqs)
	l.left -= int64(n)
	return n, err
}

// Replay returns a workload that yields reqs once, in order. It keeps reqs,
// which the caller must not change while the workload is read.
func Replay[K comparable](name string, reqs []Request[K]) Workload[K] {
	return &replay[K]{name: name, reqs: reqs}
}

type replay[K comparable] struct {
	name string
	reqs []Request[K]
}

func (r *replay[K]) Name() string { return r.name }

func (r *replay[K]) Read(reqs []Request[K]) (int, error) {
	if len(reqs) == 0 {
		return 0, nil
	}
	if len(r.reqs) == 0 {
		return 0, io.EOF
	}
	n := copy(reqs, r.reqs)
	r.reqs = r.reqs[n:]
	return n, nil
}

// ReplayReads returns a workload that yields a read request for each of
// keys once, in order: Replay of Reads(keys) without the copy (a trace of
// 13 million integer keys holds 106 MB as keys, twice that as requests).
// It keeps keys, which the caller must not change while the workload is
// read.
func ReplayReads[K comparable](name string, keys []K) Workload[K] {
	return &replayReads[K]{name: name, keys: keys}
}

type replayReads[K comparable] struct {
	name string
	keys []K
}

func (r *replayReads[K]) Name() string { return r.name }

func (r *replayReads[K]) Read(reqs []Request[K]) (int, error) {
	if len(reqs) == 0 {
		return 0, nil
	}
	if len(r.keys) == 0 {
		return 0, io.EOF
	}
	n := min(len(reqs), len(r.keys))
	for i, k := range r.keys[:n] {
		reqs[i] = Request[K]{Key: k}
	}
	r.keys = r.keys[n:]
	return n, nil
}

// Reads returns a read request for each key, in order.
func Reads[K comparable](keys []K) []Request[K] {
	reqs := make([]Request[K], len(keys))
	for i, k := range keys {
		reqs[i] = Request[K]{Key: k}
	}
	return reqs
}

// Collect reads up to max requests from w, stopping early at io.EOF, which
// it does not report. Benchmarks use it to generate their keys before the
// timer starts.
func Collect[K comparable](w Workload[K], max int) ([]Request[K], error) {
	if max <= 0 {
		return nil, nil
	}
	out := make([]Request[K], 0, min(max, 1<<20))
	buf := make([]Request[K], min(max, BatchSize))
	for len(out) < max {
		n, err := w.Read(buf[:min(len(buf), max-len(out))])
		out = append(out, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// BatchSize is a good length for the slice passed to Read: large enough to
// amortise the interface call, small enough to stay in the L1 cache.
const BatchSize = 1024
