package report

import (
	"fmt"
	"strconv"
)

// fmtNS prints a latency: "59ns", "1.2µs", "6.2ms".
func fmtNS(ns *float64) string {
	if ns == nil {
		return "-"
	}
	v := *ns
	switch {
	case v < 1000:
		return fmt.Sprintf("%.0fns", v)
	case v < 1e6:
		return trim(v/1e3) + "µs"
	case v < 1e9:
		return trim(v/1e6) + "ms"
	}
	return trim(v/1e9) + "s"
}

// trim prints three significant digits at most: 1.23, 12.3, 123.
func trim(v float64) string {
	switch {
	case v < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// fmtPct prints a fraction as a percentage with two decimals.
func fmtPct(x *float64) string {
	if x == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f%%", 100**x)
}

// fmtPct1 prints a fraction as a percentage with one decimal.
func fmtPct1(x *float64) string {
	if x == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100**x)
}

// fmtMops prints requests per second in millions.
func fmtMops(x *float64) string {
	if x == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *x/1e6)
}

// fmtF prints a number with the given decimals, or "-".
func fmtF(x *float64, decimals int) string {
	if x == nil {
		return "-"
	}
	return strconv.FormatFloat(*x, 'f', decimals, 64)
}

// fmtCSV prints a number in full for scripts, or nothing.
func fmtCSV(x *float64) string {
	if x == nil {
		return ""
	}
	return strconv.FormatFloat(*x, 'g', -1, 64)
}
