package workload

import (
	"errors"
	"slices"
	"testing"
)

// syntheticKeys reads a Synthetic to its end (readAll, in batches of 100)
// and returns its keys, checking that every request is a read.
func syntheticKeys(t *testing.T, s *Synthetic) []uint64 {
	t.Helper()
	reqs, err := readAll[uint64](t, s, 100)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]uint64, len(reqs))
	for i, q := range reqs {
		if q.Op != Read {
			t.Fatalf("request %d: %v, want a read", i, q)
		}
		keys[i] = q.Key
	}
	return keys
}

// Each kind has the shape its documentation gives it, checked request by
// request against the Zipf stream of the same seed, and ends after its
// total.
func TestSyntheticShapes(t *testing.T) {
	const n, total, seed = 1000, 20_000, 7
	zipfOf := func(kind string) *Zipf {
		z, err := NewZipf(syntheticExponents[kind], n, seed)
		if err != nil {
			t.Fatal(err)
		}
		return z
	}
	for _, kind := range SyntheticKinds {
		t.Run(kind, func(t *testing.T) {
			s, err := NewSynthetic(kind, n, total, seed)
			if err != nil {
				t.Fatal(err)
			}
			keys := syntheticKeys(t, s)
			if len(keys) != total {
				t.Fatalf("%d requests, want %d", len(keys), total)
			}
			seen := map[uint64]int{}
			for _, k := range keys {
				seen[k]++
			}
			switch kind {
			case "drift":
				z := zipfOf(kind)
				for i, k := range keys {
					if want := uint64(i)/10 + n - 1 - z.Next(); k != want {
						t.Fatalf("request %d: key %d, want %d", i, k, want)
					}
				}
			case "phases":
				z := zipfOf(kind)
				for i, k := range keys {
					set := []uint64{0, 1, 0, 2}[4*i/total]
					if want := set*n + z.Next(); k != want {
						t.Fatalf("request %d: key %d, want %d (set %d)", i, k, want, set)
					}
				}
			case "mixloop":
				loop := 0
				for i, k := range keys {
					if k < n {
						continue
					}
					if want := n + uint64(loop)%(2*n/5); k != want {
						t.Fatalf("request %d: loop key %d, want %d", i, k, want)
					}
					loop++
				}
				if share := float64(loop) / total; share < 0.38 || share > 0.42 {
					t.Errorf("the loop took %.3f of the requests, want 0.4", share)
				}
			case "zscan":
				// A scan of n/20 fresh keys starts every n/5 requests.
				next := uint64(n)
				for i := 0; i < total; i++ {
					if i%(n/5) == 0 {
						for j := 0; j < n/20 && i < total; j++ {
							if keys[i] != next {
								t.Fatalf("request %d: key %d, want the scan's %d", i, keys[i], next)
							}
							next++
							i++
						}
					}
					if i < total && keys[i] >= n {
						t.Fatalf("request %d: key %d outside a scan", i, keys[i])
					}
				}
			case "oneoffs":
				fresh := 0
				for i, k := range keys {
					if k >= n {
						if seen[k] != 1 || k != uint64(n+fresh) {
							t.Fatalf("request %d: one-off key %d asked %d times, want key %d once", i, k, seen[k], n+fresh)
						}
						fresh++
					}
				}
				if share := float64(fresh) / total; share < 0.48 || share > 0.52 {
					t.Errorf("one-off keys took %.3f of the requests, want 0.5", share)
				}
			case "uniform":
				for i, k := range keys {
					if k >= n {
						t.Fatalf("request %d: key %d, past %d keys", i, k, n)
					}
				}
				if len(seen) < n*99/100 {
					t.Errorf("%d keys drawn of %d", len(seen), n)
				}
			}
			// The same seed draws the same stream, another seed another.
			again, _ := NewSynthetic(kind, n, total, seed)
			if k2 := syntheticKeys(t, again); !slices.Equal(keys, k2) {
				t.Error("the same seed drew another stream")
			}
			other, _ := NewSynthetic(kind, n, total, seed+1)
			if k2 := syntheticKeys(t, other); slices.Equal(keys, k2) {
				t.Error("another seed drew the same stream")
			}
		})
	}
}

// Under drift the most popular key moves: the keys of the first tenth of
// the stream are mostly older than those of the last tenth, and no key
// outlives the window it was born in.
func TestSyntheticDriftMoves(t *testing.T) {
	const n, total = 1000, 100_000
	s, err := NewSynthetic("drift", n, total, 1)
	if err != nil {
		t.Fatal(err)
	}
	keys := syntheticKeys(t, s)
	last := map[uint64]int{}
	for i, k := range keys {
		last[k] = i
	}
	for k, i := range last {
		// Key k is the most popular at request 10·(k − n + 1) and is never
		// drawn once the window's oldest key is past it.
		if born := int(k) - n + 1; i >= 10*(born+n) {
			t.Fatalf("key %d drawn at request %d, after its window", k, i)
		}
	}
	if keys[total/2] <= keys[0] {
		t.Errorf("keys do not move: %d at the start, %d half way", keys[0], keys[total/2])
	}
}

func TestSyntheticRejectsBadParameters(t *testing.T) {
	for _, c := range []struct {
		kind     string
		n, total uint64
	}{
		{"sideways", 1000, 10},
		{"drift", 19, 10},
		{"drift", 1<<40 + 1, 10},
		{"phases", 1000, 0},
	} {
		if _, err := NewSynthetic(c.kind, c.n, c.total, 1); !errors.Is(err, ErrParam) {
			t.Errorf("NewSynthetic(%q, %d, %d): %v, want ErrParam", c.kind, c.n, c.total, err)
		}
	}
	s, _ := NewSynthetic("zscan", 100, 10, 3)
	if s.Name() != "synthetic(kind=zscan,n=100,requests=10,seed=3)" {
		t.Errorf("Name = %q", s.Name())
	}
}

// TestSyntheticShapeIndices checks that the integer kinds Next switches
// on name the kinds of SyntheticKinds in its order.
func TestSyntheticShapeIndices(t *testing.T) {
	for shape, want := range map[int]string{shapeDrift: "drift", shapePhases: "phases", shapeMixloop: "mixloop",
		shapeZscan: "zscan", shapeOneoffs: "oneoffs", shapeUniform: "uniform"} {
		if SyntheticKinds[shape] != want {
			t.Errorf("SyntheticKinds[%d] = %q, want %q", shape, SyntheticKinds[shape], want)
		}
	}
	if len(SyntheticKinds) != 6 {
		t.Errorf("%d kinds, want the 6 Next knows", len(SyntheticKinds))
	}
}
