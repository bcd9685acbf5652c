package snapshot

import "github.com/twochoice/twochoice/hashfn"

// Slots returns the most entries a bucket of the snapshot's table holds:
// the histogram's loads run from 0 to it. That is BucketSize, except for a
// cache that was given fewer, larger buckets (store's cacheSize), so
// readers that check records against their buckets take it from here.
func (m *Meta) Slots() int { return len(m.Histogram[0]) - 1 }

// SparseHistogram returns, for each of the parts of gen's table, how many
// buckets hold each load from 0 to slots, when only the buckets in loads
// (bucket → records) hold any: the histogram of a table far larger than
// its records, counted without a counter per bucket. Readers compare it
// with Meta.Histogram.
func SparseHistogram(gen *hashfn.Generator, parts, slots int, loads map[uint64]uint8) [][]uint64 {
	h := make([][]uint64, parts)
	for p := range h {
		h[p] = make([]uint64, slots+1)
		lo, hi := gen.PartBounds(p)
		h[p][0] = hi - lo
	}
	for b, c := range loads {
		p := gen.PartOf(b)
		h[p][0]--
		h[p][c]++
	}
	return h
}
