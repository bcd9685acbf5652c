package report

import (
	"fmt"
	"image/color"

	"github.com/twochoice/twochoice/bench/hitratio"
	"github.com/twochoice/twochoice/bench/measure"
	"github.com/twochoice/twochoice/internal/plot"
)

// HitRatioChart draws hit ratio against capacity, one line per bounded
// cache, Belady's optimum in black, and, for Zipf, the best expected hit
// ratio (the C most popular keys) as a dark grey line; the title gives the
// ceiling, the hit ratio of an unbounded cache (as a line it would squash
// the others when far above them). The x axis is logarithmic when the
// capacities span a factor of 20 or more.
func HitRatioChart(res *measure.Result, title string) *plot.Chart {
	if title == "" {
		title = "hit ratio: " + res.Workload
	}
	if res.Config.Measures&measure.MeasureHitRatio != 0 {
		title += fmt.Sprintf(" (unbounded: %.1f%%)", 100*res.Ceiling)
	}
	// Wider than the default, for five-digit capacities under the x axis
	// beside a legend of cache names.
	ch := &plot.Chart{Title: title, XLabel: "capacity (entries)", YLabel: "hit ratio (%)", Width: 960, Height: 540}
	caps := res.Capacities
	if len(caps) > 0 && caps[len(caps)-1] >= 20*caps[0] {
		ch.LogX = true
	}
	var names []string
	hits := map[string]map[int]float64{}
	for _, r := range res.Rows {
		if r.Capacity == 0 || r.HitRatio == nil || !firstOfCapacity(res, r) {
			continue
		}
		if hits[r.Cache] == nil {
			names = append(names, r.Cache)
			hits[r.Cache] = map[int]float64{}
		}
		hits[r.Cache][r.Capacity] = 100 * *r.HitRatio
	}
	next := 0 // the caches' colours, in order; Belady's optimum is black
	for _, n := range names {
		col := color.RGBA{0, 0, 0, 0xff}
		if n != hitratio.BeladyName {
			col = plot.Palette[next%len(plot.Palette)]
			next++
		}
		s := plot.Series{Name: n, Style: plot.Line, Color: col}
		for _, cp := range caps {
			if h, ok := hits[n][cp]; ok {
				s.X, s.Y = append(s.X, float64(cp)), append(s.Y, h)
			}
		}
		pts := s
		pts.Name, pts.Style = "", plot.Points
		ch.Series = append(ch.Series, s)
		if len(s.X) <= 16 {
			ch.Series = append(ch.Series, pts)
		}
	}
	if len(res.TopShare) == len(caps) && len(caps) > 0 {
		s := plot.Series{Name: "top-C keys", Style: plot.Line, Color: color.RGBA{0x44, 0x44, 0x44, 0xff}}
		for i, cp := range caps {
			s.X, s.Y = append(s.X, float64(cp)), append(s.Y, 100*res.TopShare[i])
		}
		ch.Series = append(ch.Series, s)
	}
	return ch
}
