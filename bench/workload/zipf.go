package workload

import (
	"fmt"
	"math"

	"github.com/twochoice/twochoice/internal/zipf"
)

// Zipf draws ranks 0 … n-1 with P(rank r) proportional to 1/(r+1)^s, for
// any exponent s > 0, and is an endless [Workload] of read requests for
// those ranks as keys (key 0 is the most popular). The draws are exact,
// by rejection-inversion, in O(1) memory and time for any n (package
// internal/zipf says how).
type Zipf struct {
	z    *zipf.Sampler
	s    float64 // exponent
	keys uint64  // number of keys
	seed uint64
}

// MaxZipfKeys is the largest n for which every rank is exact as a float64.
const MaxZipfKeys = zipf.MaxKeys

// NewZipf returns a Zipf generator over n keys with exponent s (a finite
// s > 0; 1 ≤ n ≤ 2^53) drawing from the given seed.
func NewZipf(s float64, n, seed uint64) (*Zipf, error) {
	if !(s > 0) || math.IsInf(s, 0) {
		return nil, fmt.Errorf("%w: zipf exponent s = %v, want a finite s > 0", ErrParam, s)
	}
	if n < 1 || n > MaxZipfKeys {
		return nil, fmt.Errorf("%w: zipf over %d keys, want 1 to 2^53", ErrParam, n)
	}
	z, err := zipf.New(s, n, seed)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrParam, err) // checked above: not reached
	}
	return &Zipf{z: z, s: s, keys: n, seed: seed}, nil
}

// Name returns "zipf(s=S,n=N,seed=SEED)".
func (z *Zipf) Name() string {
	return fmt.Sprintf("zipf(s=%g,n=%d,seed=%d)", z.s, z.keys, z.seed)
}

// Next returns the next rank, in [0, n).
func (z *Zipf) Next() uint64 { return z.z.Next() }

// Read fills reqs with read requests for the next ranks. It never fails.
func (z *Zipf) Read(reqs []Request[uint64]) (int, error) {
	for i := range reqs {
		reqs[i] = Request[uint64]{Key: z.z.Next()}
	}
	return len(reqs), nil
}

// ZipfTopShare returns the share of requests that go to the c most popular
// of n keys under a Zipf law with exponent s: the hit ratio of a cache that
// always holds exactly those keys. Under independent requests no cache of c
// entries has a higher expected hit ratio in the long run, so it is the
// ceiling to compare a cache's Zipf hit ratio with. It takes the same time
// for any n.
func ZipfTopShare(s float64, n, c uint64) float64 { return zipf.TopShare(s, n, c) }
