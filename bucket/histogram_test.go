package bucket

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
)

func TestHistogram(t *testing.T) {
	h := NewHistogram(2)
	// part 0: 2 empty, 3 with one key, 1 with three keys
	h.Add(0, 0, 2)
	h.Add(0, 1, 3)
	h.Add(0, 3, 1)
	// part 1: 5 empty, 1 with two keys
	h.Add(1, 0, 5)
	h.Add(1, 2, 1)
	if got := h.Counts(); !slices.Equal(got, []uint64{7, 3, 1, 1}) {
		t.Fatalf("Counts = %v", got)
	}
	if h.Buckets() != 12 || h.Balls() != 8 || h.MaxLoad() != 3 {
		t.Fatalf("Buckets %d Balls %d MaxLoad %d", h.Buckets(), h.Balls(), h.MaxLoad())
	}
	if got := h.PartBalls(); !slices.Equal(got, []uint64{6, 2}) {
		t.Fatalf("PartBalls = %v", got)
	}
	want := []float64{1, 5.0 / 12, 2.0 / 12, 1.0 / 12}
	got := h.ShareAtLeast()
	for k := range want {
		if math.Abs(got[k]-want[k]) > 1e-15 {
			t.Fatalf("ShareAtLeast = %v, want %v", got, want)
		}
	}
	ps := h.PartShareAtLeast()
	if len(ps[0]) != 4 || len(ps[1]) != 3 || ps[1][2] != 1.0/6 {
		t.Fatalf("PartShareAtLeast = %v", ps)
	}
	c := h.Clone()
	c.Merge(h)
	if c.Buckets() != 24 || c.Balls() != 16 || h.Buckets() != 12 {
		t.Fatalf("Merge/Clone: %v / %v", c.Parts, h.Parts)
	}
	if h.Equal(c) || !h.Equal(h.Clone()) {
		t.Fatal("Equal")
	}
	b, _ := json.Marshal(h)
	var back Histogram
	if err := json.Unmarshal(b, &back); err != nil || !back.Equal(h) {
		t.Fatalf("JSON round trip: %s, %v", b, err)
	}
	empty := NewHistogram(1)
	if empty.MaxLoad() != 0 || empty.Buckets() != 0 || len(empty.ShareAtLeast()) != 0 {
		t.Fatal("empty histogram")
	}
}

// A histogram that counted no bucket is empty whether or not zero counts
// were added to it: its shares are none (not a share of 0 at load 0) and
// it equals a fresh one, as "trailing zero counts do not matter" says.
func TestHistogramZeroCountsAreEmpty(t *testing.T) {
	fresh := NewHistogram(2)
	zeros := NewHistogram(2)
	zeros.Add(0, 3, 0)
	zeros.Add(1, 0, 0)
	if !zeros.Equal(fresh) || !fresh.Equal(zeros) {
		t.Errorf("zero counts %v do not equal an empty histogram", zeros.Parts)
	}
	one := NewHistogram(2)
	one.Add(1, 0, 1)
	if fresh.Equal(one) || one.Equal(zeros) {
		t.Errorf("%v equals a histogram of no bucket", one.Parts)
	}
	if s := zeros.ShareAtLeast(); len(s) != 0 {
		t.Errorf("ShareAtLeast of no bucket = %v, want none", s)
	}
	for j, s := range zeros.PartShareAtLeast() {
		if len(s) != 0 {
			t.Errorf("PartShareAtLeast[%d] of no bucket = %v, want none", j, s)
		}
	}
	if c := zeros.Counts(); len(c) != 0 || zeros.MaxLoad() != 0 || zeros.Buckets() != 0 {
		t.Errorf("Counts %v, MaxLoad %d, Buckets %d", c, zeros.MaxLoad(), zeros.Buckets())
	}
	// Buckets all empty are counted: load 0 has share 1.
	idle := NewHistogram(1)
	idle.Add(0, 0, 4)
	idle.Add(0, 2, 0)
	if s := idle.ShareAtLeast(); !slices.Equal(s, []float64{1}) {
		t.Errorf("four empty buckets: ShareAtLeast = %v, want [1]", s)
	}
}

// Merge of histograms with different part counts sums part by part, a
// part one of them lacks counting no bucket: it panicked (index out of
// range) when o had more parts than h.
func TestHistogramMergeDifferentParts(t *testing.T) {
	one := NewHistogram(1)
	one.Add(0, 1, 3)
	two := NewHistogram(2)
	two.Add(0, 0, 1)
	two.Add(1, 2, 5)
	want := &Histogram{Parts: [][]uint64{{1, 3}, {0, 0, 5}}}
	for _, c := range []struct{ h, o *Histogram }{{one, two}, {two, one}} {
		h := c.h.Clone()
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%d parts merging %d: panic %v", len(c.h.Parts), len(c.o.Parts), r)
				}
			}()
			h.Merge(c.o)
		}()
		if !h.Equal(want) || h.Buckets() != 9 || h.Balls() != 13 {
			t.Errorf("%d parts merging %d: %v, want %v", len(c.h.Parts), len(c.o.Parts), h.Parts, want.Parts)
		}
	}
}
