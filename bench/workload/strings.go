package workload

import (
	"fmt"
	"io"
)

// Strings returns w with each key i replaced by names[i], so that a
// generator of integer ranks drives a cache of string keys (realistic names
// from internal/keyset, say) without allocating per request. A key past
// the end of names is an ErrRange error. The workload keeps names, which the
// caller must not change while it is read.
func Strings(w Workload[uint64], names []string) Workload[string] {
	return &stringsOf{w: w, names: names}
}

type stringsOf struct {
	w     Workload[uint64]
	names []string
	buf   []Request[uint64]
	err   error
}

func (s *stringsOf) Name() string {
	return fmt.Sprintf("%s,strings=%d", s.w.Name(), len(s.names))
}

func (s *stringsOf) Read(reqs []Request[string]) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if len(s.buf) < len(reqs) {
		s.buf = make([]Request[uint64], len(reqs))
	}
	n, err := s.w.Read(s.buf[:len(reqs)])
	for i, r := range s.buf[:n] {
		if r.Key >= uint64(len(s.names)) {
			s.err = fmt.Errorf("%w: key %d with %d names", ErrRange, r.Key, len(s.names))
			if i > 0 {
				return i, nil
			}
			return 0, s.err
		}
		reqs[i] = Request[string]{Key: s.names[r.Key], Op: r.Op}
	}
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}
