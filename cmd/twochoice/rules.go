package main

import (
	"fmt"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/bucket/fluid"
	"github.com/twochoice/twochoice/internal/cli"
)

// parseRules parses a comma-separated list of placement rules. A rule
// named twice is a usage error (cli.ParseList): it would run (or solve)
// the same thing twice and print two identical columns, which is never
// what was meant.
func parseRules(s string) ([]bucket.Placement, error) {
	rules, err := cli.ParseList("rule", s, bucket.ParsePlacement)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	return rules, nil
}

// choices is the number of choices rule uses when asked for d: one choice
// always has 1.
func choices(rule bucket.Placement, d int) int {
	if rule == bucket.OneChoice {
		return 1
	}
	return d
}

// fmtShare prints a share compactly: percent-like precision for large
// shares, scientific notation for tails.
func fmtShare(x float64) string {
	switch {
	case x == 0:
		return "0"
	case x >= 1e-3:
		return fmt.Sprintf("%.6f", x)
	}
	return fmt.Sprintf("%.4e", x)
}

// belowFloor is how a table shows a fluid-limit share the solver does not
// report: it gives every share down to fluid.DefaultFloor and none below,
// so a missing share is under that floor, not zero.
var belowFloor = fmt.Sprintf("<%g", fluid.DefaultFloor)

// fmtLimit prints a share of the fluid limit for a table, belowFloor when
// the solver reported none (JSON and CSV keep the number, 0).
func fmtLimit(x float64) string {
	if x < fluid.DefaultFloor {
		return belowFloor
	}
	return fmtShare(x)
}
