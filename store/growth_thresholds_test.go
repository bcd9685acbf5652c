package store

import (
	"math/rand/v2"
	"testing"

	"github.com/twochoice/twochoice/bucket"
)

// TestGrowthStartsAtItsThresholds: an unbounded store's table grows at
// the Set that takes its entries past maxUtilization × slots (the fluid
// limit's figure, computed here afresh), and not before: after every Set
// that starts no growth, the entries are within bounds, and so is the
// stash (16 + slots/4096) once a move under way has ended; the Set that
// starts one took the entries past their bound. A stash past its bound
// never makes the table grow: structured keys under a poor hash (the
// identity, both candidates one bucket, keys in a narrow range of it)
// crowd a few buckets and fill the stash, and the store re-keys instead
// (flood.go), after which random and structured keys grow alike.
func TestGrowthStartsAtItsThresholds(t *testing.T) {
	seed := seedFor(t)
	for _, c := range []struct {
		name       string
		o          Options
		keys       int
		structured bool
	}{
		{"random keys", Options{Placement: bucket.GoLeft, Choices: 2, BucketSize: 8}, 10000, false},
		{"random keys, d-choice, C=4", Options{Placement: bucket.DChoice, Choices: 3, BucketSize: 4}, 10000, false},
		{"structured keys, poor hash", Options{Placement: bucket.DChoice, Choices: 2, BucketSize: 8}, 4000, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			o.Seed = seed
			s := newTestMapOf[uint64, int](t, o)
			if c.structured {
				setHash(s, func(k uint64) uint64 { return k<<32 | k })
			}
			u := fluidThreshold(t, o.Placement, o.Choices, o.BucketSize)
			bounds := func(n uint64) (int, int) {
				slots := n * uint64(o.BucketSize)
				return int(u * float64(slots)), 16 + int(slots/4096)
			}
			rng := rand.New(rand.NewPCG(seed, 6))
			keys := c.keys
			if testing.Short() && !c.structured {
				keys /= 2
			}
			checked := 0
			for i := range keys {
				k := rng.Uint64()
				if c.structured {
					k = uint64(i) << 20 // candidate i·n/2^12 of n buckets
				}
				before := s.Stats()
				s.Set(k, i)
				after := s.Stats()
				if after.Grows == before.Grows {
					maxE, maxStash := bounds(uint64(after.Buckets))
					if !after.Growing && (after.Entries > maxE || after.Stash > maxStash) {
						t.Fatalf("Set %d: %d entries (bound %d), stash %d (bound %d) in %d buckets, and no growth",
							i, after.Entries, maxE, after.Stash, maxStash, after.Buckets)
					}
					continue
				}
				// The table that grew is the one Sets went to before.
				maxE, maxStash := bounds(uint64(before.Buckets))
				if after.Entries <= maxE {
					t.Fatalf("Set %d: growth started at %d entries (bound %d), stash %d before (bound %d), %d buckets",
						i, after.Entries, maxE, before.Stash, maxStash, before.Buckets)
				}
				if after.Buckets <= before.Buckets {
					t.Fatalf("Set %d: grew from %d to %d buckets", i, before.Buckets, after.Buckets)
				}
				checked++
			}
			rekeys := s.Stats().Rekeys
			if checked < 5 || c.structured != (rekeys > 0) {
				t.Fatalf("%d growths, %d re-keys", checked, rekeys)
			}
			t.Logf("%d growths, %d re-keys", checked, rekeys)
		})
	}
}
