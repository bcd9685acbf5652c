package main

import (
	"fmt"
	"io"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/bucket/fluid"
	"github.com/twochoice/twochoice/internal/cli"
	"github.com/twochoice/twochoice/internal/plot"
)

// snapSummary is what load and inspect print about a store or a snapshot.
// Both commands build it from the same
// fields (the histogram of bucket loads, the stash, the options) by
// newSnapSummary, so a store and its snapshot print the same thing.
type snapSummary struct {
	Entries    uint64 `json:"entries"`
	Buckets    uint64 `json:"buckets"`
	BucketSize int    `json:"bucket_size"`
	Placement  string `json:"placement"`
	Choices    int    `json:"choices"`
	Hash       string `json:"hash"`
	// Seed is the hash seed; null where it is hidden (load without
	// --show-seed: whoever knows it can choose keys that collide).
	// inspect, which reads the user's own file, always gives it.
	Seed *uint64 `json:"seed"`
	// Histogram[k] is the number of buckets holding k keys, k = 0 … C.
	Histogram []uint64 `json:"histogram"`
	Stash     uint64   `json:"stash"`
	MaxLoad   int      `json:"max_load"`
	// ShareAtLeast[k] is the share of buckets holding ≥ k keys;
	// FluidShareAtLeast the fluid limit's at the same keys per bucket
	// (entries / buckets, stash included), or null for an empty table and
	// for a cache, whose evictions the limit does not model (as in the
	// store's own load report).
	ShareAtLeast      []float64 `json:"share_at_least"`
	FluidShareAtLeast []float64 `json:"fluid_share_at_least"`
}

// newSnapSummary fills in the shares, the maximum load and the fluid limit
// from the histogram (per part, as the snapshot stores it, or one part).
// size is the buckets' size in the options; a cache given fewer, larger
// buckets (store's cacheSize) has longer rows, and the summary's bucket
// size is then theirs.
func newSnapSummary(parts [][]uint64, stash uint64, rule bucket.Placement, d, size int, hash string, seed uint64, cache bool) (*snapSummary, error) {
	for _, p := range parts {
		size = max(size, len(p)-1)
	}
	s := &snapSummary{BucketSize: size, Placement: rule.String(), Choices: d, Hash: hash, Seed: &seed, Stash: stash,
		Histogram: make([]uint64, size+1)}
	for _, p := range parts {
		for k, c := range p {
			s.Histogram[k] += c
		}
	}
	s.Entries = stash
	for k, c := range s.Histogram {
		s.Buckets += c
		s.Entries += uint64(k) * c
		if c > 0 {
			s.MaxLoad = k
		}
	}
	if s.Buckets == 0 {
		return nil, fmt.Errorf("no buckets")
	}
	s.ShareAtLeast = make([]float64, size+1)
	var above uint64
	for k := size; k >= 0; k-- {
		above += s.Histogram[k]
		s.ShareAtLeast[k] = float64(above) / float64(s.Buckets)
	}
	if s.Entries > 0 && !cache {
		fl, err := fluid.Solve(fluid.Params{Placement: rule, D: d, Load: float64(s.Entries) / float64(s.Buckets), Capacity: size})
		if err != nil {
			return nil, err
		}
		s.FluidShareAtLeast = make([]float64, size+1)
		copy(s.FluidShareAtLeast, fl.ShareAtLeast)
	}
	return s, nil
}

// writeTable prints the histogram next to the fluid limit: per load k the
// buckets at k, the share at ≥ k, the fluid limit's, and their ratio.
func (s *snapSummary) writeTable(w io.Writer) error {
	seed := "seed hidden"
	if s.Seed != nil {
		seed = fmt.Sprint("seed ", *s.Seed)
	}
	fmt.Fprintf(w, "%d entries in %d buckets of %d slots (%s, d = %d, %s, %s), stash %d, max load %d\n\n",
		s.Entries, s.Buckets, s.BucketSize, s.Placement, s.Choices, s.Hash, seed, s.Stash, s.MaxLoad)
	rows := make([][]string, len(s.Histogram))
	for k, c := range s.Histogram {
		f, ratio := "-", "-"
		if s.FluidShareAtLeast != nil {
			fs := s.FluidShareAtLeast[k]
			f = fmtShare(fs)
			if fs > 0 {
				ratio = fmt.Sprintf("%.4f", s.ShareAtLeast[k]/fs)
			}
		}
		rows[k] = []string{fmt.Sprint(k), fmt.Sprint(c), fmtShare(s.ShareAtLeast[k]), f, ratio}
	}
	return cli.WriteTable(w, []string{"load", "buckets", "share ≥ load", "fluid limit", "bucket/fluid"}, rows)
}

// chart plots the shares against the fluid limit, on a log scale.
func (s *snapSummary) chart(title string) *plot.Chart {
	c := &plot.Chart{Title: title, XLabel: "load k", YLabel: "share of buckets with load ≥ k", LogY: true, MinY: 1e-12}
	c.Series = append(c.Series, plot.Series{Name: "buckets", X: ks(len(s.ShareAtLeast)), Y: s.ShareAtLeast, Style: plot.Points, Color: plot.Palette[0]})
	if s.FluidShareAtLeast != nil {
		c.Series = append(c.Series, plot.Series{Name: "fluid limit", X: ks(len(s.FluidShareAtLeast)), Y: s.FluidShareAtLeast, Style: plot.Line, Color: plot.Palette[1]})
	}
	return c
}

// summaryFormatFlag is --format of load and inspect: cli.Format limited to
// the formats they print (table, json), so that csv is refused while the
// flags are parsed, with the others' bad names.
type summaryFormatFlag struct{ *cli.Format }

func (f summaryFormatFlag) String() string {
	if f.Format == nil { // the zero value that flag.PrintDefaults makes
		return cli.Table.String()
	}
	return f.Format.String()
}

func (f summaryFormatFlag) Set(s string) error {
	var v cli.Format
	if err := v.Set(s); err != nil {
		return fmt.Errorf("%w %q (want table or json)", cli.ErrFormat, s)
	}
	if v == cli.CSV {
		return fmt.Errorf("format %q: this command prints table or json", s)
	}
	*f.Format = v
	return nil
}
