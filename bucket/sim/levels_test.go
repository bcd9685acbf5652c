package sim

import (
	"fmt"
	"math"
	"testing"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/internal/stats"
)

// Sorted mode, the fast window loops and the general loop must place every
// ball the same way from the same stream: same counts, bit for bit. The
// cases cover each sorted loop (fused1, fusedMax2, fused2, and placeSorted
// for ranks drawn a batch at a time), sizes that are not powers of two, and
// loads past 255, where sorted mode hands over to the counts.
func TestLevelsSortedFastGeneralAgree(t *testing.T) {
	for _, tc := range []struct {
		rule   bucket.Placement
		d      int
		n, m   uint64
		sorted bool // sorted mode runs (the parts are small enough)
		leaves bool // and hands over to the counts past load 255
	}{
		{bucket.OneChoice, 1, 1 << 12, 1 << 12, true, false},
		{bucket.OneChoice, 1, 1000, 30000, true, false}, // wide spread: leaves the window
		{bucket.OneChoice, 1, 1 << 10, 300 << 10, true, true},
		{bucket.OneChoice, 1, 1000, 300000, true, true},
		{bucket.DChoice, 2, 1 << 14, 1 << 14, true, false},
		{bucket.DChoice, 2, 1 << 10, 600 << 10, true, true},
		{bucket.DChoice, 3, 999, 5000, true, false},
		{bucket.Halves, 2, 1 << 14, 1 << 14, true, false},
		{bucket.Halves, 2, 1001, 7000, true, false},
		{bucket.Halves, 2, 1 << 10, 600 << 10, true, true},
		{bucket.GoLeft, 2, 1 << 14, 3 << 14, true, false},
		{bucket.GoLeft, 2, 1 << 10, 600 << 10, true, true},
		// Odd numbers of balls: one word's two balls (fusedHalves) split
		// between the end of a throw or the hand-over past 255.
		{bucket.Halves, 2, 1 << 12, 1<<12 + 1, true, false},
		{bucket.Halves, 2, 1 << 10, 600<<10 + 1, true, true},
		{bucket.GoLeft, 2, 1 << 10, 600<<10 + 3, true, true},
		{bucket.GoLeft, 2, 1 << 17, 1<<17 + 1, true, false}, // 2^16 bins a part: halves under GoLeft only
		{bucket.Halves, 2, 1 << 17, 1<<17 + 1, true, false},
		// The edges of sorted mode: parts of up to 2^17 bins (sortedMax).
		{bucket.Halves, 2, 1 << 18, 1 << 16, true, false},
		{bucket.Halves, 2, 1<<18 + 2, 1 << 16, false, false},
		{bucket.GoLeft, 2, 1 << 18, 1 << 16, true, false},
		{bucket.GoLeft, 2, 1<<18 + 2, 1 << 16, false, false},
		{bucket.DChoice, 2, 1 << 17, 1 << 17, true, false},
		{bucket.DChoice, 2, 1 << 18, 1 << 16, false, false},
		{bucket.GoLeft, 4, 1 << 19, 1 << 16, true, false},
		{bucket.GoLeft, 4, 1<<19 + 4, 1 << 16, false, false},
		{bucket.GoLeft, 3, 3000, 3000, true, false},
		{bucket.GoLeft, 3, 300, 90000, true, true},
		{bucket.Halves, 4, 1 << 12, 1 << 13, true, false},
		{bucket.GoLeft, 2, 1 << 36, 1 << 16, false, false}, // exact ranks, not split
	} {
		t.Run(fmt.Sprintf("%v/d=%d/n=%d/m=%d", tc.rule, tc.d, tc.n, tc.m), func(t *testing.T) {
			var hists [3]*bucket.Histogram
			for v := range hists {
				c := newLevelsChain(tc.rule, tc.d, tc.n)
				c.noBlocks = true
				c.noSorted = v == 1
				c.slow = v == 2
				g := newStream(7)
				c.throw(tc.m, &g)
				if v == 0 && (c.sorted.on || c.sorted.off) != tc.sorted {
					t.Fatalf("sorted mode ran: %v, want %v", c.sorted.on || c.sorted.off, tc.sorted)
				}
				if v == 0 && c.sorted.off != tc.leaves {
					t.Fatalf("sorted mode left: %v, want %v", c.sorted.off, tc.leaves)
				}
				hists[v] = c.histogram()
			}
			for v, name := range []string{"sorted", "windows"} {
				if !hists[v].Equal(hists[2]) {
					t.Fatalf("%s %v\ngeneral %v", name, hists[v].Parts, hists[2].Parts)
				}
			}
			if got := hists[0].Buckets(); got != tc.n {
				t.Fatalf("%d bins counted, want %d", got, tc.n)
			}
			if got := hists[0].Balls(); got != tc.m {
				t.Fatalf("%d balls counted, want %d", got, tc.m)
			}
		})
	}
}

// A run thrown in pieces is the run thrown at once: the ball still to come
// from a half-used word (rankSource.pending) carries over between throws,
// in sorted mode and on the counts.
func TestLevelsThrowInPieces(t *testing.T) {
	for _, rule := range []bucket.Placement{bucket.Halves, bucket.GoLeft} {
		for _, noSorted := range []bool{false, true} {
			n := uint64(1 << 12)
			whole := newLevelsChain(rule, 2, n)
			whole.noSorted = noSorted
			g := newStream(11)
			whole.throw(3*n, &g)
			pieces := newLevelsChain(rule, 2, n)
			pieces.noSorted = noSorted
			g = newStream(11)
			left := 3 * n
			for _, m := range []uint64{1, 2, 3, 1001, 1, 4095} {
				pieces.throw(m, &g)
				left -= m
			}
			pieces.throw(left, &g)
			if a, b := whole.histogram(), pieces.histogram(); !a.Equal(b) {
				t.Errorf("%v (noSorted %v): at once %v, in pieces %v", rule, noSorted, a.Parts, b.Parts)
			}
		}
	}
}

// Sorted mode simulates the chain the counts path simulates: from separate
// seeds, their shares per part agree within the sampling error of the two
// estimates together, and so do their maximum loads.
func TestLevelsSortedAgreesWithCounts(t *testing.T) {
	n, runs := uint64(1<<12), 64
	for _, tc := range []struct {
		rule bucket.Placement
		d    int
		load uint64
	}{{bucket.OneChoice, 1, 1}, {bucket.DChoice, 2, 1}, {bucket.Halves, 2, 1}, {bucket.GoLeft, 2, 1}, {bucket.GoLeft, 2, 4}, {bucket.DChoice, 3, 2}} {
		t.Run(fmt.Sprintf("%v/d=%d/load=%d", tc.rule, tc.d, tc.load), func(t *testing.T) {
			var hs, hc *bucket.Histogram
			var maxS, maxC []float64
			for r := range runs {
				s := newLevelsChain(tc.rule, tc.d, n)
				gs := newStream(uint64(1000 + r))
				s.throw(tc.load*n, &gs)
				c := newLevelsChain(tc.rule, tc.d, n)
				c.noSorted = true
				gc := newStream(uint64(2000 + r))
				c.throw(tc.load*n, &gc)
				if !s.sorted.on || c.sorted.on {
					t.Fatalf("sorted mode: %v and %v", s.sorted.on, c.sorted.on)
				}
				a, b := s.histogram(), c.histogram()
				maxS, maxC = append(maxS, float64(a.MaxLoad())), append(maxC, float64(b.MaxLoad()))
				if r == 0 {
					hs, hc = a, b
				} else {
					hs.Merge(a)
					hc.Merge(b)
				}
			}
			total := n * uint64(runs)
			compare := func(what string, a, b []float64, bins uint64) {
				for k := 1; k < max(len(a), len(b)); k++ {
					x, y := at(a, k), at(b, k)
					sigma := math.Sqrt(2) * stats.BinomialSigma(int(bins), (x+y)/2) / float64(bins)
					if !stats.Within(x, y, sigma, z) && math.Abs(x-y) > 3/float64(bins) {
						t.Errorf("%s share ≥ %d: sorted %.6g, counts %.6g (±%.2g)", what, k, x, y, z*sigma)
					}
				}
			}
			compare("all", hs.ShareAtLeast(), hc.ShareAtLeast(), total)
			ps, pc := hs.PartShareAtLeast(), hc.PartShareAtLeast()
			for j := range ps {
				compare(fmt.Sprintf("part %d", j), ps[j], pc[j], total/uint64(len(ps)))
			}
			// The mean maximum load: a run's maximum differs from another's
			// by a few balls at most, so z standard errors of the
			// difference of the means, from the runs' own spread.
			ms, mc := mean(maxS), mean(maxC)
			se := math.Sqrt((variance(maxS) + variance(maxC)) / float64(runs))
			if math.Abs(ms-mc) > z*se+1e-9 {
				t.Errorf("mean max load: sorted %.3f, counts %.3f (±%.3f)", ms, mc, z*se)
			}
		})
	}
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

func variance(x []float64) float64 {
	m, s := mean(x), 0.0
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return s / float64(len(x)-1)
}

// The sorted loops count balls by the stream's state: drawn inverts the
// Weyl step.
func TestDrawn(t *testing.T) {
	if g, inv := uint64(golden), uint64(goldenInverse); g*inv != 1 {
		t.Fatalf("golden·goldenInverse = %#x", g*inv)
	}
	g := newStream(5)
	for _, k := range []uint64{0, 1, 2, 255, 1 << 20, 1<<40 + 3} {
		if got := drawn(g.s, g.s+k*golden); got != k {
			t.Errorf("drawn over %d words = %d", k, got)
		}
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
		rule     bucket.Placement
		d        int
		load     uint64
		cutOften bool // margins so tight that most blocks end at one
	}{
		{bucket.OneChoice, 1, 1, false}, {bucket.DChoice, 2, 1, false}, {bucket.Halves, 2, 1, false},
		{bucket.GoLeft, 2, 1, false}, {bucket.GoLeft, 2, 3, false},
		{bucket.OneChoice, 1, 1, true}, {bucket.DChoice, 2, 1, true}, {bucket.Halves, 2, 1, true},
		{bucket.GoLeft, 2, 1, true},
	} {
		t.Run(fmt.Sprintf("%v/load=%d/cutOften=%v", tc.rule, tc.load, tc.cutOften), func(t *testing.T) {
			var hb, hp *bucket.Histogram
			var cuts uint64
			for r := range runs {
				b := newLevelsChain(tc.rule, tc.d, n)
				b.cutOften = tc.cutOften
				if b.blockWidth() == 0 {
					t.Fatal("no block mode at this size")
				}
				gb := newStream(uint64(100 + r))
				b.throw(tc.load*n, &gb)
				cuts += b.blocks.cuts
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
			if tc.cutOften && cuts < 100 {
				t.Fatalf("only %d blocks ended at a margin", cuts)
			}
			t.Logf("%d blocks ended at a margin", cuts)
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

// histogram returns the chain's bins counted by load, per part.
func (c *levelsChain) histogram() *bucket.Histogram {
	h := bucket.NewHistogram(len(c.parts))
	c.addTo(h)
	return h
}
