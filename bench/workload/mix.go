package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Mix returns w with each request turned into a write, independently, with
// probability writes (0 ≤ writes ≤ 1), drawing from seed: a read/write mix
// over w's keys. YCSB's workload A is writes = 0.5, B is 0.05, C is 0.
func Mix[K comparable](w Workload[K], writes float64, seed uint64) (Workload[K], error) {
	if !(writes >= 0 && writes <= 1) {
		return nil, fmt.Errorf("%w: write share %v, want 0 to 1", ErrParam, writes)
	}
	m := &mix[K]{w: w, share: writes, seed: seed, rng: rand.NewPCG(seed, mixStream)}
	// A write happens when a uniform 64-bit number is below the threshold;
	// writes = 1 must always write, which no uint64 threshold can express.
	if m.all = writes == 1; !m.all {
		m.threshold = uint64(math.Ldexp(writes, 64)) // < 2^64 as writes < 1
	}
	return m, nil
}

// mixStream is the PCG stream of read/write mixes.
const mixStream = 0x6d697865 // "mixe"

type mix[K comparable] struct {
	w         Workload[K]
	share     float64
	seed      uint64
	rng       *rand.PCG
	threshold uint64
	all       bool
}

func (m *mix[K]) Name() string {
	return fmt.Sprintf("%s,writes=%g,seed=%d", m.w.Name(), m.share, m.seed)
}

func (m *mix[K]) Read(reqs []Request[K]) (int, error) {
	n, err := m.w.Read(reqs)
	for i := range reqs[:n] {
		if m.all || m.rng.Uint64() < m.threshold {
			reqs[i].Op = Write
		}
	}
	return n, err
}
