package store

import (
	"fmt"
	"math"
	"strings"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/bucket/fluid"
	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/stats"
)

// Report is the load report of a store: how its entries spread over the
// buckets, next to what the fluid limit predicts for the same rule, d,
// bucket size and number of keys per bucket. [Map.Report] and
// [Cache.Report] take it; its
// String method renders a table; its JSON field names are shared with the
// inspect command and the debug page.
type Report struct {
	Entries int `json:"entries"` // keys in the store
	Buckets int `json:"buckets"` // n
	// BucketSize is C, the slots of a bucket: the options' BucketSize,
	// except in a cache that NewCache gave fewer, larger buckets (see
	// "Eviction" in the package documentation), whose report counts
	// loads up to their size.
	BucketSize int              `json:"bucket_size"`
	Placement  bucket.Placement `json:"placement"`
	Choices    int              `json:"choices"` // d
	// Hash and Seed are the hash function in use; Rekeys counts the
	// times a flood of colliding keys moved the store to a new one (see
	// "Hash flooding" in the package documentation).
	Hash   hashfn.Kind `json:"hash"`
	Seed   uint64      `json:"seed"`
	Rekeys uint64      `json:"rekeys,omitempty"`

	// Histogram[k] is the number of buckets holding k keys, k = 0 … C.
	Histogram []uint64 `json:"histogram"`
	// Stash is the number of keys in the stash; FluidStash what the fluid
	// limit predicts (its overflow fraction times the keys).
	Stash      int     `json:"stash"`
	FluidStash float64 `json:"fluid_stash"`
	MaxLoad    int     `json:"max_load"`
	// MeanLoad is the mean number of keys per bucket (stash excluded);
	// Utilization is MeanLoad / C, and MaxUtilization the utilization at
	// which the table grows.
	MeanLoad       float64 `json:"mean_load"`
	Utilization    float64 `json:"utilization"`
	MaxUtilization float64 `json:"max_utilization"`
	// MaxEntries is a cache's bound (0: unbounded). A cache's buckets fill
	// up and then evict, which the fluid limit of balls that arrive and
	// stay does not describe: its report has no fluid columns, and its
	// utilization is Entries / MaxEntries.
	MaxEntries int `json:"max_entries,omitempty"`

	// ShareAtLeast[k] is the fraction of buckets with load ≥ k, k = 0 … C;
	// FluidShareAtLeast the fluid limit's prediction at m/n = Entries /
	// Buckets (nil for an empty store, and when m/n is past
	// fluid.MaxLoad, which the solver does not take: only a stash that
	// grew while the table was kept from growing, by All or Save, gets
	// there).
	ShareAtLeast      []float64 `json:"share_at_least"`
	FluidShareAtLeast []float64 `json:"fluid_share_at_least"`

	// Parts has one entry per part: d under Halves and GoLeft, else one.
	Parts []PartReport `json:"parts"`

	// Deletes is the number of deletes the store has seen. The fluid limit
	// describes keys that arrive and stay; after many deletes the observed
	// shares drift from it (deleted keys leave holes the rule did not
	// choose), so the prediction is a guide rather than a test.
	Deletes uint64 `json:"deletes"`

	hist *bucket.Histogram
}

// PartReport is the load of one part of the table.
type PartReport struct {
	Buckets           int       `json:"buckets"`
	Entries           uint64    `json:"entries"` // keys in the part's buckets
	MeanLoad          float64   `json:"mean_load"`
	FluidMeanLoad     float64   `json:"fluid_mean_load"`
	Histogram         []uint64  `json:"histogram"`
	ShareAtLeast      []float64 `json:"share_at_least"`
	FluidShareAtLeast []float64 `json:"fluid_share_at_least"`
}

// Report returns the load report. It visits the table bucket by bucket,
// reading each bucket's control word (a consistent view of that bucket,
// taken without any lock), so it costs O(buckets) and stops no reader or
// writer. Like All, it first finishes a growth under way (in small
// batches) and keeps the table from growing while it counts, so the
// report is about one table; entries set or deleted during the count may
// or may not be in it. Solving the fluid limit adds a millisecond or so.
func (s *Map[K, V]) Report() *Report {
	t := s.pin()
	h := histogramOf[K, V](t)
	stash := t.stash.len()
	s.unpin()
	st := s.Stats()
	o := s.configOf(t)
	r := reportOf(&o, h, stash, int(t.n), t.size, st.Deletes)
	r.Rekeys = st.Rekeys
	return r
}

// Report returns the load report of the cache's table, as [Map.Report]
// does. A cache's buckets fill up and then evict, which the fluid limit of
// keys that arrive and stay does not describe: the report has no fluid
// columns.
func (s *Cache[K, V]) Report() *Report {
	t := s.tab.Load()
	h := histogramOf[K, V](t)
	st := s.Stats()
	o := s.configOf(t)
	return reportOf(&o, h, 0, int(t.n), t.size, st.Deletes)
}

// histogramOf counts t's buckets by part and load.
func histogramOf[K comparable, V any](t visited[K, V]) *bucket.Histogram {
	g := t.geom()
	h := bucket.NewHistogram(g.rule.Parts(g.d))
	counts := make([][]uint64, len(h.Parts))
	for j := range counts {
		counts[j] = make([]uint64, g.size+1)
	}
	for i := range g.n {
		counts[g.gen.PartOf(i)][t.load(i)]++
	}
	for j, c := range counts {
		for k, v := range c {
			if v > 0 {
				h.Add(j, k, v)
			}
		}
	}
	return h
}

// reportOf builds the report of a table of options o (with the table's
// hash function) from a histogram of its buckets, n buckets of size slots
// (BucketSize but in a cache that cacheSize gave larger buckets).
func reportOf(o *config, h *bucket.Histogram, stash, n, size int, deletes uint64) *Report {
	balls := int(h.Balls())
	r := &Report{
		Entries:        balls + stash,
		Buckets:        n,
		BucketSize:     size,
		Placement:      o.Placement,
		Choices:        o.Choices,
		Hash:           o.Hash,
		Seed:           o.Seed,
		Histogram:      pad(h.Counts(), size+1),
		Stash:          stash,
		MaxLoad:        h.MaxLoad(),
		MeanLoad:       float64(balls) / float64(n),
		MaxUtilization: maxUtilization(o.Placement, o.Choices, o.BucketSize),
		ShareAtLeast:   padf(h.ShareAtLeast(), size+1),
		Deletes:        deletes,
		hist:           h,
	}
	r.Utilization = r.MeanLoad / float64(o.BucketSize)
	if o.MaxEntries > 0 {
		r.MaxEntries = o.MaxEntries
		r.Utilization = float64(r.Entries) / float64(o.MaxEntries)
		r.MaxUtilization = 1
	}
	var fl *fluid.Result
	if load := float64(r.Entries) / float64(n); r.Entries > 0 && o.MaxEntries == 0 && load <= fluid.MaxLoad {
		var err error
		fl, err = fluid.Solve(fluid.Params{
			Placement: o.Placement,
			D:         o.Choices,
			Load:      load,
			Capacity:  o.BucketSize,
		})
		if err != nil {
			// The options were validated and the load is positive,
			// finite and at most fluid.MaxLoad: the solver accepts
			// every such case.
			panic("store: fluid limit: " + err.Error())
		}
		r.FluidShareAtLeast = padf(fl.ShareAtLeast, o.BucketSize+1)
		r.FluidStash = fl.Overflow * float64(r.Entries)
	}
	partBalls := h.PartBalls()
	partShares := h.PartShareAtLeast()
	for j := range h.Parts {
		p := PartReport{
			Histogram:    pad(h.Parts[j], size+1),
			Entries:      partBalls[j],
			ShareAtLeast: padf(partShares[j], size+1),
		}
		for _, c := range p.Histogram {
			p.Buckets += int(c)
		}
		if p.Buckets > 0 {
			p.MeanLoad = float64(p.Entries) / float64(p.Buckets)
		}
		if fl != nil && j < len(fl.PartShareAtLeast) && len(fl.PartShareAtLeast) == len(h.Parts) {
			p.FluidShareAtLeast = padf(fl.PartShareAtLeast[j], o.BucketSize+1)
			p.FluidMeanLoad = fl.PartLoad[j]
		}
		r.Parts = append(r.Parts, p)
	}
	return r
}

// BucketHistogram returns the counts as a bucket.Histogram, parts and all.
func (r *Report) BucketHistogram() *bucket.Histogram { return r.hist.Clone() }

func pad(c []uint64, n int) []uint64 {
	out := make([]uint64, max(n, len(c)))
	copy(out, c)
	return out
}

func padf(c []float64, n int) []float64 {
	out := make([]float64, max(n, len(c)))
	copy(out, c)
	return out
}

// String renders the report as a small table: the configuration, the
// summary figures, then one row per load k with the buckets at k, the
// observed share of buckets at ≥ k, the fluid limit's share, and how far
// apart they are in binomial standard deviations (|z| under 3 or so is
// what chance gives; the fluid limit is exact only as n grows, and
// finite tables sit slightly below it in the far tail). With parts, a
// second table shows each part's keys and shares.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d entries in %d buckets of %d slots (%s, d = %d, %s, seed %d)\n",
		r.Entries, r.Buckets, r.BucketSize, r.Placement, r.Choices, r.Hash, r.Seed)
	if r.MaxEntries > 0 {
		fmt.Fprintf(&b, "a cache of at most %d entries: utilization %.3f, mean load %.3f, max load %d",
			r.MaxEntries, r.Utilization, r.MeanLoad, r.MaxLoad)
	} else {
		fmt.Fprintf(&b, "utilization %.3f (grows at %.2f), mean load %.3f, max load %d, stash %d",
			r.Utilization, r.MaxUtilization, r.MeanLoad, r.MaxLoad, r.Stash)
	}
	if r.FluidShareAtLeast != nil {
		fmt.Fprintf(&b, " (fluid limit %s)", float(r.FluidStash))
	}
	b.WriteString("\n\n")
	b.WriteString("load   buckets   share ≥ load   fluid limit        z\n")
	for k := range r.Histogram {
		fmt.Fprintf(&b, "%4d %9d   %12s", k, r.Histogram[k], float(r.ShareAtLeast[k]))
		if r.FluidShareAtLeast != nil {
			f := r.FluidShareAtLeast[k]
			fmt.Fprintf(&b, "   %11s", float(f))
			if sd := stats.BinomialSigma(r.Buckets, f); sd > 0 {
				fmt.Fprintf(&b, " %8.1f", (r.ShareAtLeast[k]*float64(r.Buckets)-f*float64(r.Buckets))/sd)
			}
		}
		b.WriteString("\n")
	}
	if len(r.Parts) > 1 {
		// One column per part, each observed (fluid limit).
		b.WriteString("\n          ")
		for j := range r.Parts {
			fmt.Fprintf(&b, "%-22s", fmt.Sprintf("part %d (fluid limit)", j))
		}
		b.WriteString("\nkeys      ")
		for _, p := range r.Parts {
			fmt.Fprintf(&b, "%-22s", fmt.Sprintf("%.2f%%", 100*float64(p.Entries)/math.Max(1, float64(r.Entries-r.Stash))))
		}
		b.WriteString("\nmean load ")
		for _, p := range r.Parts {
			f := "-"
			if p.FluidShareAtLeast != nil {
				f = fmt.Sprintf("%.3f", p.FluidMeanLoad)
			}
			fmt.Fprintf(&b, "%-22s", fmt.Sprintf("%.3f (%s)", p.MeanLoad, f))
		}
		b.WriteString("\n")
		for k := 1; k <= r.BucketSize; k++ {
			fmt.Fprintf(&b, "≥ %-7d ", k)
			for _, p := range r.Parts {
				f := "-"
				if p.FluidShareAtLeast != nil {
					f = float(p.FluidShareAtLeast[k])
				}
				fmt.Fprintf(&b, "%-22s", fmt.Sprintf("%s (%s)", float(p.ShareAtLeast[k]), f))
			}
			b.WriteString("\n")
		}
	}
	if r.Deletes > 0 {
		fmt.Fprintf(&b, "\ndeletes: %d; the fluid limit describes keys that arrive and stay, so it is a guide here, not a prediction\n", r.Deletes)
	}
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// float formats a share compactly: 4 significant digits, exponent form for
// small values, 0 as 0.
func float(x float64) string {
	switch {
	case x == 0:
		return "0"
	case x >= 1e-3:
		return fmt.Sprintf("%.4g", x)
	}
	return fmt.Sprintf("%.3e", x)
}
