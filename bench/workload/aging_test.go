package workload

import (
	"errors"
	"math"
	"testing"
)

// An aging stream is the Zipf stream of the same seed counted back from
// the newest key, which moves on one key every step requests.
func TestAgingCountsBackFromTheNewest(t *testing.T) {
	const s, n, step, seed = 0.9, 1000, 7, 42
	a, err := NewAging(s, n, step, seed)
	if err != nil {
		t.Fatal(err)
	}
	z, _ := NewZipf(s, n, seed)
	reqs := make([]Request[uint64], 100)
	i := uint64(0)
	for range 50 {
		a.Read(reqs)
		for _, q := range reqs {
			newest := n - 1 + i/step
			if q.Key > newest {
				t.Fatalf("request %d: key %d, past the newest %d", i, q.Key, newest)
			}
			if r := z.Next(); newest-q.Key != r || q.Op != Read {
				t.Fatalf("request %d: %v, %d births back; the Zipf stream drew rank %d", i, q, newest-q.Key, r)
			}
			i++
		}
	}
	if a.Name() != "aging(s=0.9,n=1000,step=7,seed=42)" {
		t.Errorf("Name = %q", a.Name())
	}
}

// Every key has its turn as the newest, and the newest keys take the
// requests Zipf's law gives the top ranks.
func TestAgingFavoursNewKeys(t *testing.T) {
	const s, n, step = 1.0, 10_000, 16
	a, _ := NewAging(s, n, step, 3)
	const draws = 1 << 20
	young := 0 // requests for the 16 newest keys
	for i := range uint64(draws) {
		if n-1+i/step-a.Next() < 16 {
			young++
		}
	}
	want := ZipfTopShare(s, n, 16) * draws
	if math.Abs(float64(young)-want) > 5*math.Sqrt(want) {
		t.Fatalf("%d of %d requests went to the 16 newest keys; want about %.0f", young, draws, want)
	}
}

func TestAgingParams(t *testing.T) {
	for _, c := range []struct {
		s       float64
		n, step uint64
	}{{1, 10, 0}, {0, 10, 1}, {math.NaN(), 10, 1}, {1, 0, 1}} {
		if _, err := NewAging(c.s, c.n, c.step, 1); !errors.Is(err, ErrParam) {
			t.Errorf("NewAging(%v, %d, %d) error = %v; want ErrParam", c.s, c.n, c.step, err)
		}
	}
}
