package sim

import (
	"fmt"
	"math"
	"testing"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/internal/stats"
)

// The fast window loops and the general loop must place every ball the same
// way from the same ranks: same counts, bit for bit.
func TestLevelsFastEqualsGeneral(t *testing.T) {
	for _, tc := range []struct {
		rule bucket.Placement
		d    int
		n, m uint64
	}{
		{bucket.OneChoice, 1, 1 << 12, 1 << 12},
		{bucket.OneChoice, 1, 1000, 30000}, // wide spread: leaves the window
		{bucket.DChoice, 2, 1 << 14, 1 << 14},
		{bucket.DChoice, 3, 999, 5000},
		{bucket.Halves, 2, 1 << 14, 1 << 14},
		{bucket.Halves, 2, 1001, 7000},
		{bucket.GoLeft, 2, 1 << 14, 3 << 14},
		{bucket.GoLeft, 3, 3000, 3000},
		{bucket.Halves, 4, 1 << 12, 1 << 13},
		{bucket.GoLeft, 2, 1 << 36, 1 << 16}, // exact ranks, not split
	} {
		t.Run(fmt.Sprintf("%v/d=%d/n=%d/m=%d", tc.rule, tc.d, tc.n, tc.m), func(t *testing.T) {
			fast := newLevelsChain(tc.rule, tc.d, tc.n)
			slow := newLevelsChain(tc.rule, tc.d, tc.n)
			fast.noBlocks, slow.noBlocks = true, true
			slow.slow = true
			g1, g2 := newStream(7), newStream(7)
			fast.throw(tc.m, &g1)
			slow.throw(tc.m, &g2)
			hf, hs := fast.histogram(), slow.histogram()
			if !hf.Equal(hs) {
				t.Fatalf("fast %v\nslow %v", hf.Parts, hs.Parts)
			}
			if got := hf.Buckets(); got != tc.n {
				t.Fatalf("%d bins counted, want %d", got, tc.n)
			}
			if got := hf.Balls(); got != tc.m {
				t.Fatalf("%d balls counted, want %d", got, tc.m)
			}
		})
	}
}

// Block mode draws the same chain as ball-by-ball mode: shares agree within
// the sampling error of both (at n = 2^22, where blocks run; the counts of
// one run are concentrated, so a few runs each suffice).
func TestLevelsBlocksAgreeWithBalls(t *testing.T) {
	n := uint64(1 << 22)
	runs := 3
	if testing.Short() {
		n = 1 << 20
	}
	for _, tc := range []struct {
		rule bucket.Placement
		d    int
		load uint64
	}{{bucket.OneChoice, 1, 1}, {bucket.DChoice, 2, 1}, {bucket.Halves, 2, 1}, {bucket.GoLeft, 2, 1}, {bucket.GoLeft, 2, 3}} {
		t.Run(fmt.Sprintf("%v/load=%d", tc.rule, tc.load), func(t *testing.T) {
			var hb, hp *bucket.Histogram
			blocks := 0
			for r := range runs {
				b := newLevelsChain(tc.rule, tc.d, n)
				if b.blockWidth() == 0 {
					t.Fatal("no block mode at this size")
				}
				gb := newStream(uint64(100 + r))
				b.throw(tc.load*n, &gb)
				blocks++
				p := newLevelsChain(tc.rule, tc.d, n)
				p.noBlocks = true
				gp := newStream(uint64(200 + r))
				p.throw(tc.load*n, &gp)
				if r == 0 {
					hb, hp = b.histogram(), p.histogram()
				} else {
					hb.Merge(b.histogram())
					hp.Merge(p.histogram())
				}
			}
			if hb.Balls() != tc.load*n*uint64(runs) || hb.Buckets() != n*uint64(runs) {
				t.Fatalf("blocks: %d balls in %d bins", hb.Balls(), hb.Buckets())
			}
			// total is the number of bins behind the shares compared: all
			// of them, or one part's.
			compare := func(what string, a, b []float64, total uint64) {
				for k := 1; k < max(len(a), len(b)); k++ {
					x, y := at(a, k), at(b, k)
					p := (x + y) / 2
					sigma := math.Sqrt(2) * stats.BinomialSigma(int(total), p) / float64(total)
					if !stats.Within(x, y, sigma, z) && math.Abs(x-y) > 3/float64(total) {
						t.Errorf("%s share ≥ %d: blocks %.6g, balls %.6g (±%.2g)", what, k, x, y, z*sigma)
					}
				}
			}
			compare("all", hb.ShareAtLeast(), hp.ShareAtLeast(), n*uint64(runs))
			pb, pp := hb.PartShareAtLeast(), hp.PartShareAtLeast()
			for j := range pb {
				compare(fmt.Sprintf("part %d", j), pb[j], pp[j], n*uint64(runs)/uint64(len(pb)))
			}
		})
	}
}
