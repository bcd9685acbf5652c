package store

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/bucket/fluid"
	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/keyset"
	"github.com/twochoice/twochoice/internal/stats"
	"github.com/twochoice/twochoice/internal/testutil"
)

// TestGrownTableFollowsFluidLimit fills stores through many growths and
// checks the load report: every share of buckets at load ≥ k within 5
// binomial standard deviations (plus 3 buckets, for the far tail where
// finite tables sit a little under the limit) of the fluid limit. This is
// what the move order of grow.go is for: moving whole buckets fails it.
func TestGrownTableFollowsFluidLimit(t *testing.T) {
	testutil.SkipOneGoroutine(t, "fills through many growths")
	n := 100_000
	switch {
	case *longTests:
		n = 1_000_000
	case testing.Short():
		n = 30_000
	}
	keys := keyset.Synthetic(n, seedFor(t))
	for _, o := range []Options{
		{Placement: bucket.GoLeft, Choices: 2},
		{Placement: bucket.DChoice, Choices: 2, Hash: hashfn.Tabulation},
		{Placement: bucket.Halves, Choices: 3, BucketSize: 4},
		{Placement: bucket.DoubleHash, Choices: 2},
		{Placement: bucket.GoLeft, Choices: 4, BucketSize: 2},
	} {
		o.Seed = 17
		t.Run(name(o), func(t *testing.T) {
			s := newTestStore[string, int](t, o)
			for i, k := range keys {
				s.Set(k, i)
			}
			r := s.Report()
			if r.Entries != n || s.Stats().Grows < 5 {
				t.Fatalf("entries %d, stats %+v", r.Entries, s.Stats())
			}
			if bad := fluidMisfits(r); len(bad) > 0 {
				t.Errorf("%v\n%s", bad, r)
			}
		})
	}
}

// fluidMisfits returns what in r is too far from the fluid limit.
func fluidMisfits(r *Report) []string {
	var bad []string
	for k := 1; k <= r.BucketSize; k++ {
		got := r.ShareAtLeast[k] * float64(r.Buckets)
		want := r.FluidShareAtLeast[k] * float64(r.Buckets)
		sigma := stats.BinomialSigma(r.Buckets, r.FluidShareAtLeast[k])
		if !stats.Within(got, want, sigma, 5) && math.Abs(got-want) > 3 {
			bad = append(bad, fmt.Sprintf("load ≥ %d: %.0f buckets, fluid limit %.1f (σ %.1f)", k, got, want, sigma))
		}
	}
	for j, p := range r.Parts {
		if p.FluidShareAtLeast != nil && math.Abs(p.MeanLoad-p.FluidMeanLoad) > 0.02*p.FluidMeanLoad {
			bad = append(bad, fmt.Sprintf("part %d: mean load %.4f, fluid limit %.4f", j, p.MeanLoad, p.FluidMeanLoad))
		}
	}
	return bad
}

// The check must be able to fail: a table filled by one choice is far from
// the two-choice limit.
func TestFluidCheckCatchesWrongRule(t *testing.T) {
	s := newTestMap[int, int](t, MapOptions{Choices: 1, Seed: 3})
	for i := range 20000 {
		s.Set(i, i)
	}
	r := s.Report()
	if bad := fluidMisfits(r); len(bad) > 0 {
		t.Fatalf("one choice against its own limit: %v\n%s", bad, r)
	}
	o := s.options()
	o.Placement, o.Choices = bucket.DChoice, 2
	wrong := reportOf(&o, r.hist, r.Stash, r.Buckets, r.BucketSize, 0)
	if bad := fluidMisfits(wrong); len(bad) == 0 {
		t.Fatalf("a one-choice table passed as two-choice:\n%s", wrong)
	}
}

func TestReportFields(t *testing.T) {
	s := newTestMap[string, int](t, MapOptions{Seed: 8})
	empty := s.Report()
	if empty.Entries != 0 || empty.FluidShareAtLeast != nil || len(empty.Histogram) != 9 || empty.Histogram[0] != uint64(empty.Buckets) {
		t.Fatalf("empty report: %+v", empty)
	}
	_ = empty.String()
	for i, k := range keyset.Synthetic(5000, 2) {
		s.Set(k, i)
	}
	s.Delete("obj3")
	r := s.Report()
	if r.Entries != 4999 || r.Buckets != s.Stats().Buckets || r.Seed != 8 || r.Placement != bucket.GoLeft || len(r.Parts) != 2 {
		t.Fatalf("report: %+v", r)
	}
	var sum, keys uint64
	for k, c := range r.Histogram {
		sum += c
		keys += uint64(k) * c
	}
	if sum != uint64(r.Buckets) || int(keys)+r.Stash != r.Entries {
		t.Fatalf("histogram %v does not add up to %d buckets and %d entries", r.Histogram, r.Buckets, r.Entries)
	}
	if r.Parts[0].Entries+r.Parts[1].Entries != keys || r.Parts[0].Entries <= r.Parts[1].Entries {
		t.Fatalf("go-left parts: %d and %d keys (the left part holds more)", r.Parts[0].Entries, r.Parts[1].Entries)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	// The names the inspect command and the debug page share.
	for _, f := range []string{"entries", "buckets", "bucket_size", "placement", "choices", "hash", "seed",
		"histogram", "stash", "max_load", "share_at_least", "fluid_share_at_least"} {
		if _, ok := m[f]; !ok {
			t.Errorf("JSON lacks %q: %s", f, b)
		}
	}
	if m["placement"] != "goleft" || m["hash"] != "xxhash" {
		t.Errorf("placement %v, hash %v", m["placement"], m["hash"])
	}
	out := r.String()
	for _, want := range []string{"4999 entries", "goleft, d = 2", "seed 8", "fluid limit", "part 1 (fluid limit)", "deletes: 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("String lacks %q:\n%s", want, out)
		}
	}
	t.Logf("\n%s", out)
}

// A cache's report has no fluid limit (it does not model evictions), and
// String says so with "-" instead of printing zeros as the limit.
func TestCacheLoadHasNoFluid(t *testing.T) {
	s, err := NewCache(CacheOptions[int, int]{MaxEntries: 1000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5000 {
		s.Set(i, i)
	}
	r := s.Report()
	if r.FluidShareAtLeast != nil {
		t.Errorf("a cache's report has fluid shares %v", r.FluidShareAtLeast)
	}
	if out := r.String(); strings.Contains(out, "(0.000)") {
		t.Errorf("String shows a zero fluid mean load:\n%s", out)
	}
}

// TestReportFigures checks the report's derived figures against the
// histogram they come from, in a store with keys in its stash (a hash that
// gives every key the same candidates: 16 keys fill them, 14 go to the
// stash, too few to make the table grow) and in a cache:
//
//   - Entries counts the stash's keys too, and equals Len; Stash equals
//     Stats().Stash; the histogram holds the rest;
//   - MeanLoad is the keys in buckets per bucket, Utilization MeanLoad / C
//     (a cache: Entries / MaxEntries), each part's MeanLoad its keys per
//     bucket;
//   - FluidStash is the fluid limit's overflow share of Entries.
func TestReportFigures(t *testing.T) {
	s := newTestMap[int, int](t, MapOptions{Placement: bucket.DChoice, Choices: 2, BucketSize: 8, Seed: 9})
	setHash(s, func(int) uint64 { return 0x9e3779b97f4a7c15 })
	for i := range 30 {
		s.Set(i, i)
	}
	r := s.Report()
	st := s.Stats()
	if st.Grows != 0 || st.Stash != 14 {
		t.Fatalf("setup: %+v, want 14 keys in the stash and no growth", st)
	}
	var inBuckets uint64
	for k, c := range r.Histogram {
		inBuckets += uint64(k) * c
	}
	if r.Entries != 30 || r.Entries != s.Len() || r.Stash != st.Stash || int(inBuckets) != r.Entries-r.Stash {
		t.Fatalf("Entries %d (Len %d), Stash %d (Stats %d), %d keys in the histogram", r.Entries, s.Len(), r.Stash, st.Stash, inBuckets)
	}
	if want := float64(inBuckets) / float64(r.Buckets); r.MeanLoad != want || r.Utilization != want/float64(r.BucketSize) {
		t.Fatalf("MeanLoad %v, Utilization %v; want %v and %v", r.MeanLoad, r.Utilization, want, want/8)
	}
	fl, err := fluid.Solve(fluid.Params{Placement: bucket.DChoice, D: 2, Load: 30 / float64(r.Buckets), Capacity: 8})
	if err != nil {
		t.Fatal(err)
	}
	if want := fl.Overflow * 30; math.Abs(r.FluidStash-want) > 1e-9*want {
		t.Fatalf("FluidStash %v, want %v (overflow share %v of 30 entries)", r.FluidStash, want, fl.Overflow)
	}

	g := newTestMap[int, int](t, MapOptions{Placement: bucket.GoLeft, Choices: 2, Seed: 9})
	for i := range 5000 {
		g.Set(i, i)
	}
	for j, p := range g.Report().Parts {
		if want := float64(p.Entries) / float64(p.Buckets); p.Buckets == 0 || p.MeanLoad != want {
			t.Fatalf("part %d: MeanLoad %v, %d keys in %d buckets", j, p.MeanLoad, p.Entries, p.Buckets)
		}
	}

	c := newTestCache(t, CacheOptions[int, int]{MaxEntries: 1001, BucketSize: 5, Seed: 9})
	for i := range 700 {
		c.Set(i, i)
	}
	cr := c.Report()
	if want := float64(c.Len()) / 1001; cr.Utilization != want || cr.MaxUtilization != 1 || cr.MaxEntries != 1001 {
		t.Fatalf("cache: Utilization %v (want %v), MaxUtilization %v, MaxEntries %d", cr.Utilization, want, cr.MaxUtilization, cr.MaxEntries)
	}
}

// Load while the table is pinned and keys pile up in the stash: an All
// loop (or a Save) keeps the table from growing, so keys set meanwhile go
// to the stash, and the keys per bucket, stash included, can pass
// fluid.MaxLoad, which the solver refuses. Load panicked there; it must
// give a report, without fluid columns past what the solver takes.
func TestLoadWithAHugeStash(t *testing.T) {
	s := newTestMap[int, int](t, MapOptions{Seed: 9})
	s.Set(-1, -1)
	var r *Report
	for range s.All() {
		n := int(s.tabs.Load().cur.n)
		for i := range n*fluid.MaxLoad + 100 {
			s.Set(i, i)
		}
		r = s.Report()
		break
	}
	if r.Entries != s.Len() || r.Stash == 0 || r.Entries <= r.Buckets*fluid.MaxLoad {
		t.Fatalf("report of %d entries, %d in the stash, %d buckets; Len %d", r.Entries, r.Stash, r.Buckets, s.Len())
	}
	if r.FluidShareAtLeast != nil || r.FluidStash != 0 {
		t.Errorf("fluid columns at %v keys per bucket: %v, stash %v", float64(r.Entries)/float64(r.Buckets), r.FluidShareAtLeast, r.FluidStash)
	}
	if out := r.String(); !strings.Contains(out, fmt.Sprintf("%d entries", r.Entries)) {
		t.Errorf("report:\n%s", out)
	}
}

// A cache that New gave fewer, larger buckets than BucketSize (one or two
// slots a bucket, with a rule that rounds the table up) reports the slots
// its buckets have: the report said "buckets of 1 slots" beside a mean
// load of 2, its histogram ran past its own C, and the parts table left
// out the loads above BucketSize.
func TestCacheReportWithLargerBuckets(t *testing.T) {
	for _, o := range []Options{
		{MaxEntries: 10, BucketSize: 1, Placement: bucket.DoubleHash},
		{MaxEntries: 5, BucketSize: 1, Placement: bucket.GoLeft, Choices: 4},
		{MaxEntries: 10, BucketSize: 2, Placement: bucket.DoubleHash},
		{MaxEntries: 1000, BucketSize: 8, Placement: bucket.DoubleHash},
	} {
		o.Seed = 3
		s := newTestStore[int, int](t, o)
		for i := range 10 * o.MaxEntries {
			s.Set(i, i)
		}
		r := s.Report()
		c := r.BucketSize
		if len(r.Histogram) != c+1 || len(r.ShareAtLeast) != c+1 || r.MaxLoad > c || r.Buckets*c < o.MaxEntries {
			t.Errorf("%+v: buckets of %d slots, %d buckets, histogram %v, max load %d", o, c, r.Buckets, r.Histogram, r.MaxLoad)
		}
		for j, p := range r.Parts {
			if len(p.Histogram) != c+1 || len(p.ShareAtLeast) != c+1 {
				t.Errorf("%+v: part %d's histogram %v, shares %v, for buckets of %d", o, j, p.Histogram, p.ShareAtLeast, c)
			}
		}
		if out := r.String(); len(r.Parts) > 1 && !strings.Contains(out, fmt.Sprintf("≥ %d ", r.MaxLoad)) {
			t.Errorf("%+v: no row for load %d in the parts table:\n%s", o, r.MaxLoad, out)
		}
	}
}

// A cache's load report: no fluid columns (a full cache is not balls that
// arrive and stay), utilization against the bound.
func TestCacheLoadReport(t *testing.T) {
	s := newTestCache(t, CacheOptions[int, int]{MaxEntries: 5000, Seed: 3})
	for i := range 20000 {
		s.Set(i, i)
	}
	r := s.Report()
	if r.MaxEntries != 5000 || r.Entries != s.Len() || r.FluidShareAtLeast != nil || r.Utilization > 1 || r.Utilization < 0.99 {
		t.Fatalf("report %+v", r)
	}
	if out := r.String(); !strings.Contains(out, "a cache of at most 5000 entries") {
		t.Fatalf("report:\n%s", out)
	}
}

// A cache's load report counts its deletes, as Stats does.
func TestCacheLoadCountsDeletes(t *testing.T) {
	s, err := NewCache(CacheOptions[int, int]{MaxEntries: 1000, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		s.Set(i, i)
	}
	for i := 2000; i < 3000; i += 3 {
		s.Delete(i)
	}
	if got, want := s.Report().Deletes, s.Stats().Deletes; got != want || want == 0 {
		t.Errorf("Load().Deletes = %d, Stats().Deletes = %d", got, want)
	}
}
