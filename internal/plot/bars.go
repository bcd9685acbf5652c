package plot

import (
	"fmt"
	"html"
	"image/color"
	"math"
	"slices"
)

// Bars draws each (x, y) as a bar from the axis's base (0 on a linear
// axis, the bottom of a logarithmic one) up to y. The bars of several Bars
// series at the same x stand side by side, in the order of the series, so
// that an observed histogram and a predicted one can be read pair by pair.
const Bars Style = Line + 1

// barGroup is the geometry shared by a chart's Bars series.
type barGroup struct {
	series int     // Bars series in the chart
	gap    float64 // smallest distance between two bar positions
	xs     []float64
}

// bars measures the chart's Bars series: how many there are, and the
// smallest gap between their distinct x values (1 when there is only one).
func (c *Chart) bars() barGroup {
	var g barGroup
	for _, s := range c.Series {
		if s.Style != Bars {
			continue
		}
		g.series++
		for _, x := range s.X {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				g.xs = append(g.xs, x)
			}
		}
	}
	slices.Sort(g.xs)
	g.xs = slices.Compact(g.xs)
	g.gap = 1
	for i := 1; i < len(g.xs); i++ {
		if d := g.xs[i] - g.xs[i-1]; i == 1 || d < g.gap {
			g.gap = d
		}
	}
	return g
}

// barFill is the share of the gap between bar positions that a group of
// bars covers; the rest is the space between groups.
const barFill = 0.8

// drawBars draws series s, the i-th of the chart's Bars series.
func drawBars(cv canvas, l *layout, g barGroup, i int, s Series, col color.RGBA) {
	gap := g.gap / (l.x1 - l.x0) * (l.right - l.left) // in pixels
	width := gap * barFill / float64(g.series)
	base := l.bot
	if !l.logY && l.y0 < 0 {
		base = l.py(0)
	}
	for j, x := range s.X {
		y := s.Y[j]
		if !l.plottable(x, y) {
			continue
		}
		left := l.px(x) - gap*barFill/2 + float64(i)*width
		top := l.py(y)
		tip := ""
		if j < len(s.Tips) {
			tip = s.Tips[j]
		}
		cv.rect(left, min(top, base), width, math.Abs(base-top), col, tip)
	}
}

func (s *svgCanvas) rect(x, y, w, h float64, c color.RGBA, tip string) {
	if tip == "" {
		fmt.Fprintf(s.w, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", x, y, w, h, rgb(c))
		return
	}
	fmt.Fprintf(s.w, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>`+"\n", x, y, w, h, rgb(c), html.EscapeString(tip))
}

func (p *pngCanvas) rect(x, y, w, h float64, c color.RGBA, _ string) {
	for yy := int(math.Round(y)); yy < int(math.Round(y+h)); yy++ {
		for xx := int(math.Round(x)); xx < int(math.Round(x+w)); xx++ {
			p.set(xx, yy, c)
		}
	}
}

// roundUp returns the first of niceTicks' round numbers at or above y1,
// so that a bar chart's axis ends on a labelled tick above its tallest
// bar.
func roundUp(y0, y1 float64) float64 {
	t := niceTicks(y0, y1)
	if len(t) < 2 || t[len(t)-1] >= y1 {
		return y1
	}
	return t[len(t)-1] + (t[1] - t[0])
}
