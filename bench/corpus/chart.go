package corpus

import (
	"fmt"
	"path"
	"slices"

	"github.com/twochoice/twochoice/bench/hitratio"
	"github.com/twochoice/twochoice/internal/plot"
)

// MarginChart draws each row's margin as a bar: a group of bars per
// workload, one bar per capacity, below zero where twochoice is behind
// its best peer. In SVG each bar's tooltip gives the row's hit ratios.
func MarginChart(res *Result) *plot.Chart {
	var names, capacities []string
	for _, r := range res.Rows {
		if !slices.Contains(names, r.Workload) {
			names = append(names, r.Workload)
		}
		if !slices.Contains(capacities, r.Capacity) {
			capacities = append(capacities, r.Capacity)
		}
	}
	// Workloads by their base names ("gli" for "lirs/gli"), unless two
	// share one.
	labels := make([]string, len(names))
	for i, n := range names {
		labels[i] = path.Base(n)
	}
	for i := range labels {
		if slices.Index(labels, labels[i]) != i {
			copy(labels, names)
			break
		}
	}
	ch := &plot.Chart{
		Title:  fmt.Sprintf("twochoice's margin over the best of %d peers, by workload and capacity", len(res.Peers)),
		XLabel: "workload", YLabel: "margin (points)", XNames: labels,
		Width: max(960, 160+110*len(names)), Height: 540,
	}
	for i, cp := range capacities {
		s := plot.Series{Name: cp, Style: plot.Bars, Color: plot.Palette[i%len(plot.Palette)]}
		for j, n := range names {
			k := slices.IndexFunc(res.Rows, func(r Row) bool { return r.Workload == n && r.Capacity == cp })
			if k < 0 || res.Rows[k].Margin == nil {
				continue
			}
			r := res.Rows[k]
			s.X, s.Y = append(s.X, float64(j+1)), append(s.Y, *r.Margin)
			s.Tips = append(s.Tips, fmt.Sprintf("%s at %s (%d entries): twochoice %.2f%%, %s %.2f%%, belady %.2f%%: %+.2f points",
				r.Workload, r.Capacity, r.Entries, 100*r.HitRatio[Twochoice], r.BestPeer, 100*r.Best, 100*r.HitRatio[hitratio.BeladyName], *r.Margin))
		}
		ch.Series = append(ch.Series, s)
	}
	return ch
}
