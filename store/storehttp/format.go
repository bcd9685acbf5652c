package storehttp

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// count writes n with thousands separators: 1,234,567.
func count(n uint64) string {
	s := strconv.FormatUint(n, 10)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i, c := range []byte(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, c)
	}
	return string(out)
}

// percent writes a share (0 to 1) as a percentage with three significant
// digits or more, down to the tails: 42.8%, 0.0225%, 1.22e-19%.
func percent(x float64) string {
	p := 100 * x
	switch {
	case p == 0:
		return "0%"
	case p >= 10:
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	case p >= 1e-3:
		// Fixed point to the third significant digit: 'g' would drop
		// trailing zeros and write 1% for 1.00%.
		return strconv.FormatFloat(p, 'f', 2-int(math.Floor(math.Log10(p))), 64) + "%"
	}
	return strconv.FormatFloat(p, 'e', 2, 64) + "%"
}

// shareText writes a share as the load report does: four significant
// digits, exponent form under 1e-3, 0 as 0.
func shareText(x float64) string {
	switch {
	case x == 0:
		return "0"
	case x >= 1e-3:
		return strconv.FormatFloat(x, 'g', 4, 64)
	}
	return strconv.FormatFloat(x, 'e', 3, 64)
}

// decimal writes x with the given digits after the point, or in exponent
// form when that would show nothing.
func decimal(x float64, digits int) string {
	if x != 0 && math.Abs(x) < math.Pow(10, -float64(digits)) {
		return strconv.FormatFloat(x, 'e', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', digits, 64)
}

// millis writes a duration in milliseconds: 12.3 ms.
func millis(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}
