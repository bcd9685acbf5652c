package storehttp

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestCount: thousands separators go between groups of three digits,
// counted from the right, and nowhere else: removing them gives the
// number back, no group but the first is shorter than three, and none is
// empty.
func TestCount(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 0))
	ns := []uint64{0, 7, 99, 999, 1000, 12345, 123456, 1234567, math.MaxUint64}
	for range 1000 {
		ns = append(ns, rng.Uint64()>>rng.IntN(64))
	}
	for _, n := range ns {
		got := count(n)
		if plain := strings.ReplaceAll(got, ",", ""); plain != strconv.FormatUint(n, 10) {
			t.Fatalf("count(%d) = %q (seed %d)", n, got, seed)
		}
		groups := strings.Split(got, ",")
		for i, g := range groups {
			if len(g) > 3 || len(g) == 0 || (i > 0 && len(g) != 3) {
				t.Fatalf("count(%d) = %q: group %q (seed %d)", n, got, g, seed)
			}
		}
	}
	if got := count(1234567); got != "1,234,567" {
		t.Errorf("count(1234567) = %q", got)
	}
}

// percent keeps three significant digits, trailing zeros included.
func TestPercent(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{
		{0, "0%"}, {1, "100.0%"}, {0.428, "42.8%"}, {0.1, "10.0%"}, {0.01, "1.00%"},
		{0.0555, "5.55%"}, {0.001, "0.100%"}, {0.000225, "0.0225%"}, {1e-5, "0.00100%"},
		{1.22e-21, "1.22e-19%"},
	} {
		if got := percent(c.x); got != c.want {
			t.Errorf("percent(%v) = %q, want %q", c.x, got, c.want)
		}
	}
}
