package workload

import "fmt"

// Scan is an endless workload of read requests for the keys 0, 1, …, n-1,
// over and over: the access pattern of a sequential scan, which defeats a
// recency-only cache smaller than n (every request misses).
type Scan struct {
	n, next uint64
}

// NewScan returns a scan over n ≥ 1 keys. It needs no seed.
func NewScan(n uint64) (*Scan, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: scan over 0 keys", ErrParam)
	}
	return &Scan{n: n}, nil
}

// Name returns "scan(n=N)".
func (s *Scan) Name() string { return fmt.Sprintf("scan(n=%d)", s.n) }

// Read fills reqs with read requests. It never fails.
func (s *Scan) Read(reqs []Request[uint64]) (int, error) {
	for i := range reqs {
		reqs[i] = Request[uint64]{Key: s.next}
		s.next++
		if s.next == s.n {
			s.next = 0
		}
	}
	return len(reqs), nil
}
