package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/internal/testutil"
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
	testutil.SkipOneGoroutine(t, "assembly loops against their Go twins")
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
			stops[fmt.Sprint("halvesLoop stop=", sa)]++
		}
	}
	// Every loop must have run to the end and stopped at 255 in some
	// trials, and halvesLoop stopped at either ball of a word.
	for _, k := range []string{"oneLoop stopped false", "oneLoop stopped true", "max2Loop stopped false", "max2Loop stopped true",
		"pairLoop stopped false", "pairLoop stopped true", "halvesLoop stop=0", "halvesLoop stop=1", "halvesLoop stop=2"} {
		if stops[k] == 0 {
			t.Errorf("no trial with %q: %v", k, stops)
		}
	}
	t.Log(stops)
}

// TestPairedLoopsMatchGo runs each paired loop (assembly on amd64) and its
// Go twin on copies of the same pairs of random states, some with loads at
// 255, and requires the same bins, counters, states and stops; every kind
// of stop, of either chain, must come up.
func TestPairedLoopsMatchGo(t *testing.T) {
	testutil.SkipOneGoroutine(t, "assembly loops against their Go twins")
	seed := uint64(20261201)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	tables := map[string]*pairTable{"halves": pairTableOf(bucket.Halves), "goleft": pairTableOf(bucket.GoLeft)}
	type loop2 func(bins *[4 * sortedMax]uint8, nA, nB *[512]uint32, t *pairTable, xA, xB, words uint64, k uint) (uint64, uint64, int, int)
	// The loops under one signature: parts of 2^k bins.
	loops := map[string][2]loop2{
		"oneLoop2": {
			func(b *[4 * sortedMax]uint8, nA, nB *[512]uint32, _ *pairTable, xA, xB, w uint64, k uint) (uint64, uint64, int, int) {
				return oneLoop2(b, (*[256]uint32)(nA[:256]), (*[256]uint32)(nB[:256]), xA, xB, w, k)
			},
			func(b *[4 * sortedMax]uint8, nA, nB *[512]uint32, _ *pairTable, xA, xB, w uint64, k uint) (uint64, uint64, int, int) {
				return oneLoop2Go(b, (*[256]uint32)(nA[:256]), (*[256]uint32)(nB[:256]), xA, xB, w, k)
			}},
		"max2Loop2": {
			func(b *[4 * sortedMax]uint8, nA, nB *[512]uint32, _ *pairTable, xA, xB, w uint64, k uint) (uint64, uint64, int, int) {
				return max2Loop2(b, (*[256]uint32)(nA[:256]), (*[256]uint32)(nB[:256]), xA, xB, w, 1<<k)
			},
			func(b *[4 * sortedMax]uint8, nA, nB *[512]uint32, _ *pairTable, xA, xB, w uint64, k uint) (uint64, uint64, int, int) {
				return max2Loop2Go(b, (*[256]uint32)(nA[:256]), (*[256]uint32)(nB[:256]), xA, xB, w, 1<<k)
			}},
		"halvesLoop2": {
			func(b *[4 * sortedMax]uint8, nA, nB *[512]uint32, t *pairTable, xA, xB, w uint64, k uint) (uint64, uint64, int, int) {
				return halvesLoop2(b, nA, nB, t, xA, xB, w, 1<<k-1)
			},
			func(b *[4 * sortedMax]uint8, nA, nB *[512]uint32, t *pairTable, xA, xB, w uint64, k uint) (uint64, uint64, int, int) {
				return halvesLoop2Go(b, nA, nB, t, xA, xB, w, 1<<k-1)
			}},
	}
	stops := map[string]int{}
	for trial := range 200 {
		for name, loop := range loops {
			for rule, tab := range tables {
				maxK := 17 // sortedMax
				switch {
				case name == "halvesLoop2" && rule == "halves":
					maxK = 15 // a coin bit: 2k + 1 ≤ 32
				case name == "halvesLoop2":
					maxK = 16
				case rule == "goleft":
					continue // one part: the table plays no part
				}
				k := uint(1 + rng.IntN(maxK))
				size := uint64(1) << k
				top := []int{3, 8, 255}[trial%3]
				xA, xB := rng.Uint64(), rng.Uint64()
				words := uint64(rng.IntN(int(size) + 1))
				what := fmt.Sprintf("%s, trial %d, %s: 2^%d bins a part, loads ≤ %d, %d words", name, trial, rule, k, top, words)
				var nA, nB [2][512]uint32
				bins := new([2][4 * sortedMax]uint8)
				for c, base := range []int{0, 2 * sortedMax} {
					next := &nA[0]
					if c == 1 {
						next = &nB[0]
					}
					sortedPart(rng, bins[0][base:base+int(size)], next[:256], 0, top)
					if name == "halvesLoop2" {
						sortedPart(rng, bins[0][base+sortedMax:base+sortedMax+int(size)], next[256:], sortedMax, top)
					}
				}
				bins[1], nA[1], nB[1] = bins[0], nA[0], nB[0]
				a, b, sa, sb := loop[0](&bins[0], &nA[0], &nB[0], tab, xA, xB, words, k)
				ga, gb, gsa, gsb := loop[1](&bins[1], &nA[1], &nB[1], tab, xA, xB, words, k)
				if a != ga || b != gb || sa != gsa || sb != gsb || bins[0] != bins[1] || nA[0] != nA[1] || nB[0] != nB[1] {
					t.Fatalf("%s: states %#x %#x stops %d %d, Go %#x %#x stops %d %d; bins or counters differ: %v",
						what, a, b, sa, sb, ga, gb, gsa, gsb, bins[0] != bins[1])
				}
				stops[fmt.Sprintf("%s A %d B %d", name, sa, sb)]++
			}
		}
	}
	for name := range loops {
		want := []string{"A 0 B 0", "A 1 B 0", "A 0 B 1"}
		if name == "halvesLoop2" {
			want = append(want, "A 2 B 0", "A 0 B 2")
		}
		for _, k := range want {
			if stops[name+" "+k] == 0 {
				t.Errorf("no trial of %s with stops %q: %v", name, k, stops)
			}
		}
	}
	t.Log(stops)
}
