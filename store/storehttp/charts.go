package storehttp

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"

	"github.com/twochoice/twochoice/internal/plot"
	"github.com/twochoice/twochoice/store"
)

// The colours of the page and its charts: what the store holds, and
// what the fluid limit predicts.
var (
	observedColor = plot.Palette[0] // blue
	fluidColor    = plot.Palette[3] // orange
	floorColor    = plot.Palette[7] // grey
)

// charts are a view's charts, as inline SVG.
type charts struct {
	Histogram template.HTML   // buckets by load, observed and predicted
	Tail      template.HTML   // share of buckets with load ≥ k, log scale
	Parts     []template.HTML // the histogram of each part; nil with one part
}

// Chart sizes in pixels. Parts get half the width when there are two of
// them, so that they sit side by side under the overall charts.
const (
	mainWidth, mainHeight = 580, 360
	partHeight            = 300
)

func (v *view) getCharts() *charts {
	v.chartsOnce.Do(func() { v.charts = drawCharts(v.load) })
	return v.charts
}

func drawCharts(r *store.Report) *charts {
	c := &charts{
		Histogram: svg(histogramChart("buckets by load", r.Histogram, r.FluidShareAtLeast, r.Buckets, mainWidth, mainHeight)),
		Tail:      svg(tailChart(r)),
	}
	if len(r.Parts) > 1 {
		w := mainWidth
		if len(r.Parts) > 2 {
			w = 2 * mainWidth / 3
		}
		for j, p := range r.Parts {
			title := fmt.Sprintf("part %d: buckets by load", j)
			c.Parts = append(c.Parts, svg(histogramChart(title, p.Histogram, p.FluidShareAtLeast, p.Buckets, w, partHeight)))
		}
	}
	return c
}

// histogramChart draws the share of buckets at each load k = 0 … C as
// bars, next to the fluid limit's share at k (the difference of its shares
// at ≥ k and ≥ k+1). Hovering over a bar shows its figures.
func histogramChart(title string, hist []uint64, fluidAtLeast []float64, buckets, w, h int) *plot.Chart {
	c := &plot.Chart{Title: title, XLabel: "load k (keys in the bucket)", YLabel: "% of buckets", Width: w, Height: h, NoLegend: true}
	ks := make([]float64, len(hist))
	obs := make([]float64, len(hist))
	tips := make([]string, len(hist))
	for k, n := range hist {
		ks[k] = float64(k)
		obs[k] = 100 * share(n, buckets)
		tips[k] = fmt.Sprintf("load %d: %s buckets, %s", k, count(n), percent(share(n, buckets)))
	}
	c.Series = append(c.Series, plot.Series{Name: "observed", X: ks, Y: obs, Style: plot.Bars, Color: observedColor, Tips: tips})
	if fluidAtLeast != nil {
		fl := make([]float64, len(hist))
		ftips := make([]string, len(hist))
		for k := range hist {
			s := atLoad(fluidAtLeast, k)
			fl[k] = 100 * s
			ftips[k] = fmt.Sprintf("load %d: the fluid limit predicts %s, %s buckets", k, percent(s), decimal(s*float64(buckets), 1))
		}
		c.Series = append(c.Series, plot.Series{Name: "fluid limit", X: ks, Y: fl, Style: plot.Bars, Color: fluidColor, Tips: ftips})
	}
	return c
}

// tailChart draws the share of buckets with load ≥ k, k = 1 … C, on a
// log scale, where the few fullest buckets (the ones the theory is about)
// can be seen: observed as dots, the fluid limit as a line, and the share
// of one bucket (1/n), below which nothing can be observed.
func tailChart(r *store.Report) *plot.Chart {
	c := &plot.Chart{Title: "share of buckets with load ≥ k", XLabel: "load k", YLabel: "share of buckets (log scale)",
		LogY: true, Width: mainWidth, Height: mainHeight, NoLegend: true}
	var ks, obs, one []float64
	for k := 1; k < len(r.ShareAtLeast); k++ {
		ks = append(ks, float64(k))
		obs = append(obs, r.ShareAtLeast[k])
		one = append(one, 1/float64(max(r.Buckets, 1)))
	}
	c.Series = append(c.Series, plot.Series{Name: "one bucket", X: ks, Y: one, Style: plot.Line, Color: floorColor})
	if r.FluidShareAtLeast != nil {
		fl := make([]float64, len(ks))
		for i := range fl {
			fl[i] = at(r.FluidShareAtLeast, i+1)
		}
		c.Series = append(c.Series, plot.Series{Name: "fluid limit", X: ks, Y: fl, Style: plot.Line, Color: fluidColor})
	}
	c.Series = append(c.Series, plot.Series{Name: "observed", X: ks, Y: obs, Style: plot.Points, Color: observedColor})
	return c
}

// svg renders a chart, or a note saying why there is none.
func svg(c *plot.Chart) template.HTML {
	var b bytes.Buffer
	if err := c.SVG(&b); err != nil {
		return template.HTML(`<p class="note">` + template.HTMLEscapeString(err.Error()) + `</p>`)
	}
	// The SVG is the plot package's own output: numbers, colours and text
	// it escapes itself, never markup from a request.
	return template.HTML(b.String())
}

// at is s[i], or 0 past its end.
func at(s []float64, i int) float64 {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// atLoad is the share of buckets at load exactly k, from the shares at
// ≥ k.
func atLoad(atLeast []float64, k int) float64 {
	return max(at(atLeast, k)-at(atLeast, k+1), 0)
}

func share(n uint64, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// cssColor is a colour for the page's style sheet and legend.
func cssColor(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }
