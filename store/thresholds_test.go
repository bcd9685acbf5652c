package store

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/bucket/fluid"
)

var (
	printThresholds = flag.Bool("store.print-thresholds", false, "print the threshold tables of grow.go as Go source")
	longTests       = flag.Bool("store.long", false, "run the long versions of the store's tests")
)

// fluidThreshold is the rule of maxUtilization, computed: the largest u in
// steps of 0.05 (at most 0.95) whose fluid-limit overflow is at most
// overflowTarget.
func fluidThreshold(t testing.TB, rule bucket.Placement, d, c int) float64 {
	best := 0.05
	for k := 1; k <= 19; k++ {
		u := float64(k) / 20
		of, err := fluid.OverflowAt(rule, d, c, u)
		if err != nil {
			t.Fatal(err)
		}
		if of > overflowTarget {
			break
		}
		best = u
	}
	return best
}

// TestThresholdsFollowFluidLimit recomputes the threshold tables of
// grow.go from the fluid limit: they must agree entry for entry. With
// -store.print-thresholds it prints them, to paste into grow.go.
func TestThresholdsFollowFluidLimit(t *testing.T) {
	// The whole table takes half a minute to recompute: the normal suite
	// checks the default configuration and one choice, -store.long or
	// -store.print-thresholds all of it.
	ds, cs := []int{1, 2}, []int{8}
	if *longTests || *printThresholds {
		ds, cs = []int{1, 2, 3, 4, 5, 6, 7, 8}, []int{1, 2, 3, 4, 5, 6, 7, 8}
	}
	for _, rule := range []bucket.Placement{bucket.DChoice, bucket.GoLeft} {
		var src strings.Builder
		for _, d := range ds {
			fmt.Fprintf(&src, "\t\t{")
			for _, c := range cs {
				r := rule
				if d == 1 {
					r = bucket.OneChoice
				}
				want := fluidThreshold(t, r, d, c)
				if got := maxUtilization(rule, d, c); got != want {
					t.Errorf("%s d=%d C=%d: table says %.2f, fluid limit gives %.2f", rule, d, c, got, want)
				}
				sep := ", "
				if c == cs[len(cs)-1] {
					sep = ""
				}
				fmt.Fprintf(&src, "%.2f%s", want, sep)
			}
			fmt.Fprintf(&src, "},\n")
		}
		if *printThresholds {
			t.Logf("%s:\n%s", rule, src.String())
		}
	}
	// The rules without a table of their own share d-choice's limit.
	for _, rule := range []bucket.Placement{bucket.Halves, bucket.DoubleHash} {
		if maxUtilization(rule, 2, 8) != maxUtilization(bucket.DChoice, 2, 8) {
			t.Errorf("%s does not use d-choice's thresholds", rule)
		}
	}
}
