package store

import (
	"math/rand/v2"
	"testing"
)

// TestPolicyAdapts replays a workload that changes its nature and checks
// that the shadows move the eviction policy with it (shadow.go): a
// shifting working set, where keys fall out of use and LRU is right,
// then a loop over twice the cache's capacity, where only a policy that
// keeps a stable subset hits (λ = 0), then the shifting set again. Single
// goroutine and seeded, so the run is the same every time for a seed.
func TestPolicyAdapts(t *testing.T) {
	seed := seedFor(t)
	const maxE = 4096
	s := newTestCache(t, CacheOptions[uint64, int]{MaxEntries: maxE, Seed: seed | 1})
	rng := rand.New(rand.NewPCG(seed, 9))
	var next uint64 = 1 << 40 // keys of the shifting set
	// lambdas counts the requests of a phase's second half under each λ.
	shifting := func(reqs int) (hits int, lambdas [3]int) {
		for i := range reqs {
			// A window of 3/4 of the capacity that moves on a key
			// every 4 requests: a key is used for about 12,000
			// requests, then never again.
			next += uint64(rng.IntN(8) / 7)
			k := next - uint64(rng.IntN(maxE*3/4))
			if _, ok := s.Get(k); ok {
				hits++
			} else {
				s.Set(k, 0)
			}
			if i >= reqs/2 {
				lambdas[s.pol.choice()/len(alphaShifts)]++
			}
		}
		return hits, lambdas
	}
	loop := func(reqs int) (hits int, lambdas [3]int) {
		for i := range reqs {
			k := uint64(i % (2 * maxE))
			if _, ok := s.Get(k); ok {
				hits++
			} else {
				s.Set(k, 0)
			}
			if i >= reqs/2 {
				lambdas[s.pol.choice()/len(alphaShifts)]++
			}
		}
		return hits, lambdas
	}
	const phase = 40 * maxE
	h1, l1 := shifting(phase)
	h2, l2 := loop(phase)
	h3, l3 := shifting(phase)
	t.Logf("shifting set: %.1f%% hits, second half's requests under λ = 0, 1, 2.5: %v", 100*float64(h1)/phase, l1)
	t.Logf("loop:         %.1f%% hits, second half's requests under λ = 0, 1, 2.5: %v", 100*float64(h2)/phase, l2)
	t.Logf("shifting set: %.1f%% hits, second half's requests under λ = 0, 1, 2.5: %v", 100*float64(h3)/phase, l3)
	// The loop is the only phase where λ = 0 is right: it takes over
	// within the loop's first half, and the shifting set's return leaves
	// it within its own (all but a quarter of its second half).
	if l2[0] < phase/2*9/10 {
		t.Errorf("the loop's second half ran %d of %d requests under λ = 0", l2[0], phase/2)
	}
	if l1[0] > phase/2/4 || l3[0] > phase/2/4 {
		t.Errorf("the shifting set's second halves ran %d and %d of %d requests under λ = 0", l1[0], l3[0], phase/2)
	}
	// And the loop hits: over a third of Belady's share of it, (C−1)/(2C).
	if h2 < phase/6 {
		t.Errorf("the loop hit %d of %d requests", h2, phase)
	}
}
