package measure

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Every value falls in the bucket whose range holds it, and buckets tile
// the numbers without gaps.
func TestBuckets(t *testing.T) {
	next := uint64(0)
	for i := range histBuckets {
		lo, w := bucketRange(i)
		if lo != next {
			t.Fatalf("bucket %d starts at %d, want %d", i, lo, next)
		}
		if i >= histExact && float64(w)/float64(lo) > 1.0/64+1e-12 {
			t.Fatalf("bucket %d: width %d at %d is more than 1/64 of its values", i, w, lo)
		}
		for _, v := range []uint64{lo, lo + w/2, lo + w - 1} {
			if b := bucketOf(v); b != i {
				t.Fatalf("value %d in bucket %d, want %d", v, b, i)
			}
		}
		next = lo + w
		if i == histBuckets-1 && next != 0 {
			t.Fatalf("last bucket ends at %d, want 2^64", next)
		}
	}
	if b := bucketOf(math.MaxUint64); b != histBuckets-1 {
		t.Fatalf("2^64-1 in bucket %d", b)
	}
}

// Quantiles agree with a sorted reference to the buckets' resolution.
func TestQuantiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h histogram
	var ref []float64
	for range 100_000 {
		v := int64(math.Exp(r.NormFloat64()*1.5 + 5)) // log-normal, around 150 ns
		h.add(v)
		ref = append(ref, float64(v))
	}
	h.add(-5) // a sample below the overhead counts as 0
	ref = append(ref, 0)
	slices.Sort(ref)
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999, 1} {
		want := ref[int(math.Ceil(q*float64(len(ref))))-1]
		got := h.quantile(q)
		if math.Abs(got-want) > want/64+1 {
			t.Errorf("q%v = %v, reference %v", q, got, want)
		}
	}
	var a, b histogram
	a.add(10)
	b.add(1000)
	b.add(1000)
	a.merge(&b)
	if a.n != 3 || math.Abs(a.quantile(0.34)-1000) > 1000.0/64 || a.quantile(0.33) != 10 {
		t.Fatalf("merged: n %d, q.33 %v, q.34 %v", a.n, a.quantile(0.33), a.quantile(0.34))
	}
	if (&histogram{}).quantile(0.5) != 0 {
		t.Fatal("empty histogram")
	}
}
