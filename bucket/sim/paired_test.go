package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/twochoice/twochoice/bucket"
)

// TestThrowPairMatchesThrow throws, under each rule with a fused loop, the same balls into a pair of chains
// through throwPair and into two chains alone, in chunks of random sizes
// (odd ones leave a half word pending from one throw to the next), and
// requires the same counts, streams and pending halves after every chunk.
// Loads of up to 300 balls a bin make the halves loop stop at 255.
func TestThrowPairMatchesThrow(t *testing.T) {
	seed := uint64(20261202)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	paired := map[int]int{}
	for trial := range 120 {
		rule := []bucket.Placement{bucket.OneChoice, bucket.DChoice, bucket.Halves, bucket.GoLeft}[trial%4]
		d := 2
		if rule == bucket.OneChoice {
			d = 1
		}
		// Up to 2^18 bins: parts of up to sortedMax = 2^17 (the halves loop
		// up to 2^15, 2^16 under GoLeft, the pair loop beyond).
		n := uint64(1) << (1 + trial*7%18)
		if rule == bucket.OneChoice || rule == bucket.DChoice {
			n = min(n, sortedMax)
		}
		load := []uint64{1, 3, 300}[trial/4%3]
		m := load*n + uint64(rng.IntN(3))
		if load == 300 && n > 1<<8 {
			m = 4 * n
		}
		pair := newChainPair(rule, d, n)
		alone := [2]*levelsChain{newLevelsChain(rule, d, n), newLevelsChain(rule, d, n)}
		gp := [2]stream{newStream(uint64(trial)), newStream(uint64(trial) + 1000)}
		ga := gp
		name := fmt.Sprintf("trial %d: %v, n = %d, m = %d", trial, rule, n, m)
		for left := m; left > 0; {
			k := min(left, 1+uint64(rng.IntN(int(m))))
			if pair[0].pairsWith(pair[1]) {
				paired[pair[0].fusedLoop()]++
			}
			throwPair(pair[0], pair[1], k, &gp[0], &gp[1])
			for i, c := range alone {
				c.throw(k, &ga[i])
			}
			left -= k
			for i := range 2 {
				p, a := pair[i], alone[i]
				if gp[i] != ga[i] || p.src.hasPending != a.src.hasPending || p.src.pending != a.src.pending ||
					!p.histogram().Equal(a.histogram()) {
					t.Fatalf("%s, chain %d after %d balls: paired %v (stream %#x), alone %v (stream %#x)",
						name, i, m-left, p.histogram().Parts, gp[i].s, a.histogram().Parts, ga[i].s)
				}
			}
		}
	}
	for _, l := range []int{loopOne, loopMax2, loopHalves} {
		if paired[l] == 0 {
			t.Errorf("no throw went through the paired loop of fused loop %d: %v", l, paired)
		}
	}
	t.Logf("paired throws by fused loop: %v", paired)
}
