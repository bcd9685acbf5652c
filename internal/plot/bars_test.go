package plot

import (
	"bytes"
	"image/png"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func barChart(logY bool) *Chart {
	ks := []float64{0, 1, 2, 3, 4}
	return &Chart{Title: "buckets by load", XLabel: "load", YLabel: "% of buckets", LogY: logY,
		Series: []Series{
			{Name: "observed", X: ks, Y: []float64{5, 20, 40, 30, 5}, Style: Bars, Color: Palette[0],
				Tips: []string{"a", "b", "c<d", "e", "f"}},
			{Name: "predicted", X: ks, Y: []float64{6, 19, 41, 29, 5}, Style: Bars, Color: Palette[1]},
		}}
}

var rectRE = regexp.MustCompile(`<rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9.]+)" fill="(#[0-9a-f]+)"`)

func TestBarsSVG(t *testing.T) {
	var b bytes.Buffer
	if err := barChart(false).SVG(&b); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	type bar struct{ x, y, w, h float64 }
	byColor := map[string][]bar{}
	for _, m := range rectRE.FindAllStringSubmatch(s, -1) {
		f := func(i int) float64 { v, _ := strconv.ParseFloat(m[i], 64); return v }
		byColor[m[5]] = append(byColor[m[5]], bar{f(1), f(2), f(3), f(4)})
	}
	// Five bars and one legend square per series.
	obs, pred := byColor[rgb(Palette[0])], byColor[rgb(Palette[1])]
	if len(obs) != 6 || len(pred) != 6 {
		t.Fatalf("%d and %d rects, want 6 each:\n%s", len(obs), len(pred), s)
	}
	for i := range 5 {
		o, p := obs[i], pred[i]
		// Side by side, observed on the left, touching, same baseline.
		if o.x+o.w > p.x+0.11 || p.x-(o.x+o.w) > 0.11 {
			t.Errorf("bar pair %d: observed %v, predicted %v not side by side", i, o, p)
		}
		if d := (o.y + o.h) - (p.y + p.h); d > 0.11 || d < -0.11 {
			t.Errorf("bar pair %d: baselines differ: %v %v", i, o, p)
		}
	}
	// Heights are proportional to the values: 40 is twice 20.
	if r := obs[2].h / obs[1].h; r < 1.99 || r > 2.01 {
		t.Errorf("heights %v and %v, want 2:1", obs[2].h, obs[1].h)
	}
	if !strings.Contains(s, "<title>c&lt;d</title>") {
		t.Error("tooltip missing or not escaped")
	}
	// Every bar position is ticked.
	for _, k := range []string{">0<", ">1<", ">2<", ">3<", ">4<"} {
		if !strings.Contains(s, k) {
			t.Errorf("no tick label %s", k)
		}
	}
}

func TestBarsLogAndPNG(t *testing.T) {
	c := barChart(true)
	c.Series[0].Y[0] = 0 // no place on a log axis: no bar
	var b bytes.Buffer
	if err := c.SVG(&b); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), `fill="`+rgb(Palette[0])+`"`); n != 5 {
		t.Errorf("%d observed rects on a log axis, want 4 bars and the legend", n)
	}
	b.Reset()
	if err := c.PNG(&b); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for y := range img.Bounds().Dy() {
		for x := range img.Bounds().Dx() {
			r, g, bb, _ := img.At(x, y).RGBA()
			if c := Palette[1]; uint8(r>>8) == c.R && uint8(g>>8) == c.G && uint8(bb>>8) == c.B {
				n++
			}
		}
	}
	if n < 1000 {
		t.Errorf("%d pixels of the predicted bars' colour", n)
	}
}

func TestNoLegend(t *testing.T) {
	c := barChart(false)
	var with, without bytes.Buffer
	if err := c.SVG(&with); err != nil {
		t.Fatal(err)
	}
	c.NoLegend = true
	if err := c.SVG(&without); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(with.String(), ">predicted<") || strings.Contains(without.String(), ">predicted<") {
		t.Fatal("NoLegend did not drop the legend")
	}
	// The plot gets the legend's room: the same bar is wider.
	w1 := rectRE.FindStringSubmatch(with.String())[3]
	w2 := rectRE.FindStringSubmatch(without.String())[3]
	a, _ := strconv.ParseFloat(w1, 64)
	b, _ := strconv.ParseFloat(w2, 64)
	if b <= a {
		t.Fatalf("bar width %v with a legend, %v without", a, b)
	}
}

func TestBarsAxisEndsOnATick(t *testing.T) {
	c := barChart(false)
	c.Series[0].Y[2] = 47.7
	l, err := c.layout()
	if err != nil {
		t.Fatal(err)
	}
	if l.y1 != 50 {
		t.Fatalf("y axis ends at %v, want 50 (the tick above 47.7)", l.y1)
	}
}

// Bars all below zero stand down from a zero the axis shows, and named x
// positions are ticked and labelled by name.
func TestBarsNegativeAndNamed(t *testing.T) {
	c := &Chart{Title: "margins", XNames: []string{"OLTP", "P12", "loop"}, Series: []Series{
		{Name: "1%", X: []float64{1, 2, 3}, Y: []float64{-8, -7, -24}, Style: Bars},
		{Name: "25%", X: []float64{1, 2, 3}, Y: []float64{-9, -10, -12}, Style: Bars},
	}}
	l, err := c.layout()
	if err != nil {
		t.Fatal(err)
	}
	if l.y1 < 0 || l.y0 > -24 {
		t.Errorf("y axis %v to %v, want it to hold -24 to 0", l.y0, l.y1)
	}
	var b bytes.Buffer
	if err := c.SVG(&b); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, name := range []string{">OLTP<", ">P12<", ">loop<"} {
		if !strings.Contains(s, name) {
			t.Errorf("no x label %s", name)
		}
	}
	zero := l.py(0)
	for _, m := range rectRE.FindAllStringSubmatch(s, -1) {
		y, _ := strconv.ParseFloat(m[2], 64)
		if h, _ := strconv.ParseFloat(m[4], 64); h > 13 && math.Abs(y-zero) > 0.11 { // not a legend square
			t.Errorf("a bar below zero starts at y = %v, not at zero's %v", y, zero)
		}
	}
}
