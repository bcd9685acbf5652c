package bucket

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/stats"
)

func TestPlacementText(t *testing.T) {
	want := []string{"one", "dchoice", "halves", "goleft", "double"}
	for i, p := range Placements() {
		if p.String() != want[i] {
			t.Errorf("%d prints as %q, want %q", i, p, want[i])
		}
		var q Placement
		if err := q.UnmarshalText([]byte(want[i])); err != nil || q != p {
			t.Errorf("parse %q = %v, %v", want[i], q, err)
		}
	}
	if _, err := ParsePlacement("left"); !errors.Is(err, ErrPlacement) {
		t.Errorf("ParsePlacement(left) = %v", err)
	}
	if _, err := Placement(9).MarshalText(); !errors.Is(err, ErrPlacement) {
		t.Errorf("Placement(9).MarshalText() = %v", err)
	}
}

func TestPlacementSchemes(t *testing.T) {
	want := map[Placement]hashfn.Scheme{
		OneChoice: hashfn.Independent, DChoice: hashfn.Independent,
		Halves: hashfn.Parts, GoLeft: hashfn.Parts, DoubleHash: hashfn.Double,
	}
	for p, s := range want {
		if p.Scheme() != s {
			t.Errorf("%v: scheme %v, want %v", p, p.Scheme(), s)
		}
	}
	if err := OneChoice.CheckChoices(2); !errors.Is(err, ErrPlacement) {
		t.Errorf("one with 2 choices: %v", err)
	}
	if err := GoLeft.CheckChoices(9); !errors.Is(err, ErrPlacement) {
		t.Errorf("goleft with 9 choices: %v", err)
	}
	if _, err := DoubleHash.Generator(1000, 2); !errors.Is(err, hashfn.ErrRange) {
		t.Errorf("double over 1000 buckets: %v", err)
	}
}

// The deterministic cases: who wins when loads differ, and where go-left and
// one choice send a tie.
func TestChooseTable(t *testing.T) {
	cases := []struct {
		loads []uint32
		p     Placement
		want  int
	}{
		{[]uint32{3}, OneChoice, 0},
		{[]uint32{1, 2}, DChoice, 0},
		{[]uint32{2, 1}, DChoice, 1},
		{[]uint32{2, 1}, GoLeft, 1},
		{[]uint32{2, 1}, Halves, 1},
		{[]uint32{5, 0}, DoubleHash, 1},
		{[]uint32{1, 1}, GoLeft, 0},
		{[]uint32{3, 2, 2}, GoLeft, 1},
		{[]uint32{2, 3, 2}, GoLeft, 0},
		{[]uint32{4, 4, 4, 1}, GoLeft, 3},
		{[]uint32{4, 3, 9, 3, 3}, GoLeft, 1},
		{[]uint32{7, 6, 5, 4, 3, 2, 1, 0}, DChoice, 7},
		{[]uint32{0, 1, 2, 3, 4, 5, 6, 7}, Halves, 0},
		{[]uint32{^uint32(0), 0}, DChoice, 1},
	}
	for _, c := range cases {
		for _, coin := range []uint64{0, 1 << 63, ^uint64(0), 0x5555555555555555} {
			if got := c.p.Choose(c.loads, coin); got != c.want {
				t.Errorf("%v.Choose(%v, %#x) = %d, want %d", c.p, c.loads, coin, got, c.want)
			}
			if len(c.loads) == 2 {
				if got := c.p.Choose2(c.loads[0], c.loads[1], coin); got != c.want {
					t.Errorf("%v.Choose2(%v, %#x) = %d, want %d", c.p, c.loads, coin, got, c.want)
				}
			}
		}
	}
}

// Coin rules take each tied candidate about equally often and never an
// untied one. The tolerance is 5 binomial standard deviations of the
// sample, so a fair rule fails with probability under 10⁻⁵ per count (and
// the seeded run is the same every time).
func TestChooseCoinFair(t *testing.T) {
	const trials = 60000
	patterns := [][]uint32{
		{1, 1},
		{2, 2, 2},
		{0, 3, 0, 3},
		{5, 5, 5, 5, 5, 5, 5, 5},
		{9, 1, 4, 1, 1, 7, 1, 2},
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, p := range []Placement{DChoice, Halves, DoubleHash} {
		for _, loads := range patterns {
			t.Run(fmt.Sprintf("%v/%v", p, loads), func(t *testing.T) {
				counts := make([]int, len(loads))
				min := loads[0]
				for _, l := range loads {
					if l < min {
						min = l
					}
				}
				var tied []int
				for k, l := range loads {
					if l == min {
						tied = append(tied, k)
					}
				}
				for range trials {
					counts[p.Choose(loads, r.Uint64())]++
				}
				share := 1 / float64(len(tied))
				sigma := stats.BinomialSigma(trials, share)
				for k, c := range counts {
					if loads[k] != min {
						if c != 0 {
							t.Errorf("candidate %d (load %d, not least) won %d times", k, loads[k], c)
						}
						continue
					}
					if !stats.Within(float64(c), trials*share, sigma, 5) {
						t.Errorf("tied candidate %d won %d of %d, want %.0f ± %.0f", k, c, trials, trials*share, 5*sigma)
					}
				}
				if len(loads) == 2 {
					c2 := 0
					for range trials {
						c2 += p.Choose2(loads[0], loads[1], r.Uint64())
					}
					if !stats.Within(float64(c2), trials/2, sigma, 5) {
						t.Errorf("Choose2 sent %d of %d ties right", c2, trials)
					}
				}
			})
		}
	}
}

// Choose2 and Choose agree on every pair of small loads and coin.
func TestChoose2MatchesChoose(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, p := range Placements() {
		for a := uint32(0); a < 4; a++ {
			for b := uint32(0); b < 4; b++ {
				for range 50 {
					c := r.Uint64()
					if x, y := p.Choose2(a, b, c), p.Choose([]uint32{a, b}, c); x != y {
						t.Fatalf("%v loads (%d,%d) coin %#x: Choose2 %d, Choose %d", p, a, b, c, x, y)
					}
				}
			}
		}
	}
}

func BenchmarkChoose(b *testing.B) {
	loads := []uint32{3, 1, 2, 1}
	var s int
	for _, p := range []Placement{DChoice, GoLeft} {
		b.Run(p.String()+"/d4", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s += p.Choose(loads, uint64(i)*0x9e3779b97f4a7c15)
			}
		})
		b.Run(p.String()+"/Choose2", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s += p.Choose2(uint32(i&1), uint32(i>>1&1), uint64(i)*0x9e3779b97f4a7c15)
			}
		})
	}
	_ = s
}
