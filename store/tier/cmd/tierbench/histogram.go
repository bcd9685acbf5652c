package main

import (
	"math/bits"
	"time"
)

// histogram counts durations in buckets of 1/16 of a power of two of
// nanoseconds (at most 6% apart), enough for quantiles of latencies from
// tens of nanoseconds to seconds.
type histogram struct {
	counts [64 * 16]uint64
	n      uint64
}

func newHistogram() *histogram { return &histogram{} }

func bucketOf(ns uint64) int {
	if ns < 16 {
		return int(ns)
	}
	e := bits.Len64(ns) - 1 // 2^e ≤ ns
	return e*16 + int((ns>>(e-4))&15)
}

// lowerBound returns the smallest duration in bucket b.
func lowerBound(b int) time.Duration {
	if b < 16 {
		return time.Duration(b)
	}
	e, m := b/16, b%16
	return time.Duration((uint64(16) + uint64(m)) << (e - 4))
}

func (h *histogram) add(d time.Duration) {
	h.counts[bucketOf(uint64(max(d, 0)))]++
	h.n++
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
}

// quantile returns the lower bound of the bucket that holds quantile q,
// or 0 for an empty histogram.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q * float64(h.n-1))
	var seen uint64
	for b, c := range h.counts {
		if seen += c; seen > rank {
			return lowerBound(b)
		}
	}
	return lowerBound(len(h.counts) - 1)
}
