package workload

import (
	"fmt"
	"math/rand/v2"
)

// Uniform is an endless workload of read requests for keys drawn
// independently and uniformly from [0, n).
type Uniform struct {
	n, seed uint64
	rng     *rand.Rand
}

// uniformStream is the PCG stream of Uniform generators.
const uniformStream = 0x756e6966 // "unif"

// NewUniform returns a uniform generator over n ≥ 1 keys drawing from the
// given seed.
func NewUniform(n, seed uint64) (*Uniform, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: uniform over 0 keys", ErrParam)
	}
	return &Uniform{n: n, seed: seed, rng: rand.New(rand.NewPCG(seed, uniformStream))}, nil
}

// Name returns "uniform(n=N,seed=SEED)".
func (u *Uniform) Name() string { return fmt.Sprintf("uniform(n=%d,seed=%d)", u.n, u.seed) }

// Next returns the next key. Uint64N is unbiased for every n.
func (u *Uniform) Next() uint64 { return u.rng.Uint64N(u.n) }

// Read fills reqs with read requests. It never fails.
func (u *Uniform) Read(reqs []Request[uint64]) (int, error) {
	for i := range reqs {
		reqs[i] = Request[uint64]{Key: u.rng.Uint64N(u.n)}
	}
	return len(reqs), nil
}
