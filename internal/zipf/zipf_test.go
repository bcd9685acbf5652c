package zipf

import (
	"errors"
	"math"
	"testing"
	"time"
)

// Past exact terms the harmonic number comes from the Euler–Maclaurin
// formula: it must agree with the plain sum, and a huge n takes no time.
func TestHarmonicLarge(t *testing.T) {
	for _, s := range []float64{0.5, 0.9, 0.999999999, 1, 1.000000001, 1.1, 2} {
		for _, n := range []uint64{exact + 1, 3 * exact, 1_000_003} {
			var want float64
			for k := n; k >= 1; k-- {
				want += math.Pow(float64(k), -s)
			}
			if got := harmonic(s, n); math.Abs(got-want) > 1e-12*want {
				t.Errorf("H(%d, %v) = %.17g; the sum is %.17g", n, s, got, want)
			}
		}
	}
	start := time.Now()
	if got := TopShare(1, 1<<53, 1000); !(got > 0 && got < 1) {
		t.Errorf("TopShare(1, 2^53, 1000) = %v", got)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("TopShare at 2^53 keys took %v", d)
	}
}

func TestNewParams(t *testing.T) {
	for _, c := range []struct {
		s float64
		n uint64
	}{{0, 10}, {-1, 10}, {math.NaN(), 10}, {math.Inf(1), 10}, {1, 0}, {1, MaxKeys + 1}} {
		if _, err := New(c.s, c.n, 1); !errors.Is(err, ErrParam) {
			t.Errorf("New(%v, %d) error = %v; want ErrParam", c.s, c.n, err)
		}
	}
}
