package sim

import (
	"fmt"
	"math"
	"testing"

	"github.com/twochoice/twochoice/bucket"
)

// sureCategories' suffix sums rest on two facts about every rule with two
// candidates: the strictly less loaded candidate wins, and a tie goes to
// candidate 0 with the same share of coins at every load (tieShare). Check
// both against Choose2 for every pair of byte loads and both coins.
func TestChoose2IsLessLoadedThenTie(t *testing.T) {
	for _, rule := range []bucket.Placement{bucket.DChoice, bucket.Halves, bucket.GoLeft} {
		tie := tieShare(rule)
		for a := range uint32(256) {
			for b := range uint32(256) {
				var won float64
				for coin := range uint64(2) {
					if rule.Choose2(a, b, coin<<63) == 0 {
						won += 0.5
					}
				}
				want := tie
				switch {
				case a < b:
					want = 1
				case a > b:
					want = 0
				}
				if won != want {
					t.Fatalf("%v: Choose2(%d, %d) gives candidate 0 a share %v of the coins, want %v", rule, a, b, won, want)
				}
			}
		}
	}
}

// pairwiseCategories is the definition sureCategories computes in
// O(levels): every pair of sure levels, decided by Choose2 once per coin.
func pairwiseCategories(c *levelsChain, sets [2][]interval, sure [2]uint64) map[[2]int]float64 {
	p0, p1 := &c.parts[c.partOf[0]], &c.parts[c.partOf[1]]
	out := map[[2]int]float64{}
	for i, ia := range sets[0] {
		for j, ib := range sets[1] {
			w := shareOf(ia, sure[0]) * shareOf(ib, sure[1]) / 2
			la, lb := uint32(p0.lo+i), uint32(p1.lo+j)
			for coin := range uint64(2) {
				if c.rule.Choose2(la, lb, coin<<63) == 0 {
					out[[2]int{c.partOf[0], int(la)}] += w
				} else {
					out[[2]int{c.partOf[1], int(lb)}] += w
				}
			}
		}
	}
	return out
}

func TestSureCategoriesMatchPairwise(t *testing.T) {
	n := uint64(1 << 22)
	if testing.Short() {
		n = 1 << 20 // parts still large enough for blocks
	}
	for _, rule := range []bucket.Placement{bucket.DChoice, bucket.Halves, bucket.GoLeft} {
		for _, load := range []uint64{1, 3} {
			t.Run(fmt.Sprintf("%v/load=%d", rule, load), func(t *testing.T) {
				c := newLevelsChain(rule, 2, n)
				g := newStream(uint64(load))
				checked := 0
				for step := range 8 {
					// Ball by ball (quicker than blocks, for the test).
					c.noBlocks = true
					c.throw(load*n/8, &g)
					c.noBlocks = false
					// Widths from block mode's own to wide ones, which
					// leave some levels without sure ranks.
					for _, w := range []uint64{c.blockWidth(), 4096, 1 << 16} {
						if w == 0 {
							t.Fatalf("step %d: no block width", step)
						}
						var sets [2][]interval
						var sure [2]uint64
						for k := range 2 {
							p := &c.parts[c.partOf[k]]
							sets[k], sure[k] = sureSets(p, uniformMargins(p, w), nil)
						}
						if sure[0] == 0 || sure[1] == 0 {
							continue
						}
						want := pairwiseCategories(c, sets, sure)
						got := map[[2]int]float64{}
						total := 0.0
						for _, ct := range c.sureCategories(sets, sure, nil) {
							got[[2]int{ct.j, ct.l}] += ct.p
							total += ct.p
						}
						if math.Abs(total-1) > 1e-12 {
							t.Errorf("step %d, w = %d: chances sum to %v", step, w, total)
						}
						for key, p := range want {
							if p == 0 {
								continue
							}
							if math.Abs(got[key]-p) > 1e-12*math.Max(p, 1e-300) && math.Abs(got[key]-p) > 1e-15 {
								t.Errorf("step %d, w = %d, part %d level %d: %v, pairwise %v", step, w, key[0], key[1], got[key], p)
							}
						}
						for key, p := range got {
							if want[key] == 0 && p != 0 {
								t.Errorf("step %d, w = %d, part %d level %d: %v, pairwise 0", step, w, key[0], key[1], p)
							}
						}
						checked++
					}
				}
				if checked < 8 {
					t.Errorf("only %d states checked", checked)
				}
			})
		}
	}
}

// uniformMargins gives every boundary of p the margin w.
func uniformMargins(p *levelPart, w uint64) []uint64 {
	m := make([]uint64, p.hi-p.lo+1)
	for i := range m {
		m[i] = w
	}
	return m
}
