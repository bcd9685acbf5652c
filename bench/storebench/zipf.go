package storebench

import (
	"math"
	"math/rand/v2"
	"sort"
)

// Zipf returns count draws from a Zipf distribution with exponent s over
// ranks 0 … n-1 (rank r has weight 1/(r+1)^s), seeded. Unlike
// math/rand/v2's Zipf it accepts s = 1, the exponent of the benchmarks'
// workloads. It draws by inverse transform over the cumulative weights.
func Zipf(n, count int, s float64, seed uint64) []int32 {
	cum := make([]float64, n)
	total := 0.0
	for r := range n {
		total += math.Pow(float64(r+1), -s)
		cum[r] = total
	}
	rng := rand.New(rand.NewPCG(seed, 0x21bf))
	out := make([]int32, count)
	for i := range out {
		u := rng.Float64() * total
		out[i] = int32(sort.SearchFloat64s(cum, u))
		if int(out[i]) >= n {
			out[i] = int32(n - 1)
		}
	}
	return out
}
