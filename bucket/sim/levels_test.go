package sim

import (
	"fmt"
	"testing"

	"github.com/twochoice/twochoice/bucket"
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
