package store

import (
	"math/rand/v2"
	"testing"
)

// The sketch counts: a key added f times estimates at least f (up to the
// counter's cap), keys never added estimate low, raise and halving do what
// they say.
func TestSketch(t *testing.T) {
	seed := seedFor(t)
	rng := rand.New(rand.NewPCG(seed, 2))
	sk := new(sketch)
	sk.init(1000)
	add := func(h uint64) uint8 { return sk.add(sk.spots(h)) }
	counts := make(map[uint64]int)
	for range 3000 {
		h := rng.Uint64() % 500 * 0x9e3779b97f4a7c15 // 500 keys, uneven counts
		if rng.IntN(3) == 0 {
			h = 7
		}
		counts[h]++
		if got := add(h); int(got) < min(counts[h], counterMax) {
			t.Fatalf("add: estimate %d after %d adds", got, counts[h])
		}
	}
	for h, n := range counts {
		if got := sk.estimate(h); int(got) < min(n, counterMax) {
			t.Fatalf("estimate %d after %d adds", got, n)
		}
	}
	over := 0
	for i := range uint64(1000) {
		if sk.estimate(i*0x9e3779b97f4a7c15+1) > 1 {
			over++
		}
	}
	if over > 50 {
		t.Fatalf("%d of 1000 absent keys estimate above 1", over)
	}
	sk.raise(12345, 9)
	if got := sk.estimate(12345); got < 9 {
		t.Fatalf("raise to 9: estimate %d", got)
	}
	before := sk.estimate(7)
	sk.advance(sk.period-1, sk.period)
	if got := sk.estimate(7); got != before/2 || sk.gen.Load() != 1 {
		t.Fatalf("halving: %d → %d, generation %d", before, got, sk.gen.Load())
	}
	sk.advance(1, 2) // no boundary crossed
	if sk.gen.Load() != 1 {
		t.Fatalf("advance without a boundary moved the generation")
	}
}
