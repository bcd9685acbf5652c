package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/twochoice/twochoice/bucket"
)

// sortedPart fills part with a sorted state (fullest first) of random
// loads up to top, and next with its counters (next[l] = base + the number
// of bins with load ≥ l), as enterSorted would. With top = 255, one bin in
// 16 holds a load of 254 or 255, so that balls soon reach one at 255.
func sortedPart(rng *rand.Rand, part []uint8, next []uint32, base uint32, top int) {
	var count [257]uint32
	for i := range part {
		v := rng.IntN(min(top, 8) + 1)
		if top == 255 && rng.IntN(16) == 0 {
			v = 254 + rng.IntN(2)
		}
		part[i] = uint8(v)
		count[v]++
	}
	slices.Sort(part)
	slices.Reverse(part)
	atLeast := uint32(0)
	for l := 255; l >= 0; l-- {
		atLeast += count[l]
		next[l] = base + atLeast
	}
}

// TestSortedLoopsMatchGo runs each sorted-mode loop that the build uses
// (assembly on amd64) and its Go twin on copies of the same random states,
// some with loads at 255 so that the loops stop, and requires the same
// bins, counters, stream state and stop. Under purego or off amd64 the two
// are the same code and the test checks nothing new.
func TestSortedLoopsMatchGo(t *testing.T) {
	seed := uint64(20261130)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	tables := map[string]*pairTable{"halves": pairTableOf(bucket.Halves), "goleft": pairTableOf(bucket.GoLeft)}
	stops := map[string]int{}
	for trial := range 300 {
		k := uint(1 + rng.IntN(16))
		size := uint64(1) << k
		top := []int{3, 8, 255}[trial%3]
		x := rng.Uint64()
		balls := uint64(rng.IntN(int(2 * size)))
		end := x + balls*golden
		name := fmt.Sprintf("trial %d: 2^%d bins, loads ≤ %d, %d balls", trial, k, top, balls)

		// One part.
		var nextA, nextB [256]uint32
		binsA := make([]uint8, size)
		sortedPart(rng, binsA, nextA[:], 0, top)
		binsB, nextB := slices.Clone(binsA), nextA
		a, b := oneLoop(binsA, &nextA, x, end, k), oneLoopGo(binsB, &nextB, x, end, k)
		if a != b || !slices.Equal(binsA, binsB) || nextA != nextB {
			t.Fatalf("oneLoop, %s: state %#x, Go %#x, bins or counters differ: %v", name, a, b, !slices.Equal(binsA, binsB))
		}
		stops[fmt.Sprint("oneLoop stopped ", a != end)]++
		sortedPart(rng, binsA, nextA[:], 0, top)
		binsB, nextB = slices.Clone(binsA), nextA
		a, b = max2Loop(binsA, &nextA, x, end, size), max2LoopGo(binsB, &nextB, x, end, size)
		if a != b || !slices.Equal(binsA, binsB) || nextA != nextB {
			t.Fatalf("max2Loop, %s: state %#x, Go %#x, bins or counters differ: %v", name, a, b, !slices.Equal(binsA, binsB))
		}
		stops[fmt.Sprint("max2Loop stopped ", a != end)]++

		// Two parts, part 1 at sortedMax.
		for rule, tab := range tables {
			var pA, pB [512]uint32
			var bA, bB [2 * sortedMax]uint8
			sortedPart(rng, bA[:size], pA[:256], 0, top)
			sortedPart(rng, bA[sortedMax:sortedMax+size], pA[256:], sortedMax, top)
			bB, pB = bA, pA
			a, b := pairLoop(&bA, &pA, tab, x, end, size-1), pairLoopGo(&bB, &pB, tab, x, end, size-1)
			if a != b || bA != bB || pA != pB {
				t.Fatalf("pairLoop %s, %s: state %#x, Go %#x, bins or counters differ: %v", rule, name, a, b, bA != bB)
			}
			stops[fmt.Sprint("pairLoop stopped ", a != end)]++
			if k > 15 && rule == "halves" {
				continue // halves mode takes parts up to 2^15 under Halves (a coin bit)
			}
			sortedPart(rng, bA[:size], pA[:256], 0, top)
			sortedPart(rng, bA[sortedMax:sortedMax+size], pA[256:], sortedMax, top)
			bB, pB = bA, pA
			words := x + balls/2*golden
			a, sa := halvesLoop(&bA, &pA, tab, x, words, size-1)
			b, sb := halvesLoopGo(&bB, &pB, tab, x, words, size-1)
			if a != b || sa != sb || bA != bB || pA != pB {
				t.Fatalf("halvesLoop %s, %s: state %#x stop %d, Go %#x stop %d, bins or counters differ: %v", rule, name, a, sa, b, sb, bA != bB)
			}
			stops[fmt.Sprint("halvesLoop stop ", sa)]++
		}
	}
	// Every loop must have run to the end and stopped at 255 in some
	// trials, and halvesLoop stopped at either ball of a word.
	for _, k := range []string{"oneLoop stopped false", "oneLoop stopped true", "max2Loop stopped false", "max2Loop stopped true",
		"pairLoop stopped false", "pairLoop stopped true", "halvesLoop stop 0", "halvesLoop stop 1", "halvesLoop stop 2"} {
		if stops[k] == 0 {
			t.Errorf("no trial with %q: %v", k, stops)
		}
	}
	t.Log(stops)
}
