package plot

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/twochoice/twochoice/internal/cli"
)

// Style is how a series is drawn.
type Style uint8

const (
	// Points marks each (x, y) with a dot.
	Points Style = iota
	// Line joins the points in order.
	Line
)

// Series is one named set of points.
type Series struct {
	// Name labels the series in the legend; a series without one has no
	// legend entry (the points drawn over a line of the same colour, say).
	Name  string
	X, Y  []float64
	Style Style
	// Color is the series' colour; the zero value takes the next one of a
	// palette, so that a line and the points of the same rule can share it
	// by sharing a Color.
	Color color.RGBA
	// Tips, if set, are shown when the pointer rests on a point's bar, in
	// SVG only (Bars series only; a <title> per bar, no script).
	Tips []string
}

// Chart is a chart to draw. The zero Width and Height mean 720 × 480.
type Chart struct {
	Title, XLabel, YLabel string
	// LogY makes the y axis logarithmic, down to MinY (0 means 1e-300).
	LogY bool
	// LogX makes the x axis logarithmic; points with x ≤ 0 are left out.
	// Its ticks are at 1, 2 and 5 times powers of ten, labelled in plain
	// numbers (cache capacities from 1,000 to 1,000,000, say).
	LogX          bool
	MinY          float64
	Series        []Series
	Width, Height int
	// NoLegend leaves the legend out, and its room to the plot: for small
	// charts whose page explains the colours once for all of them.
	NoLegend bool
	// XNames, if set, names the x positions 1, 2, …, len(XNames): the x
	// axis is ticked at each of them, labelled with its name instead of
	// its number (bars over named groups, one group per workload, say).
	XNames []string
}

// ErrChart is returned for a chart that cannot be drawn.
var ErrChart = errors.New("plot: cannot draw chart")

// Palette is the colours given to series without one, in order.
var Palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xd6, 0x27, 0x28, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
	{0xff, 0x7f, 0x0e, 0xff}, {0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff},
	{0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff},
}

// WriteFile draws the chart to path, as SVG or PNG by its extension. The
// chart is drawn in memory and written with cli.ReplaceFile, to a
// temporary file beside path (or beside the file path links to), which
// then replaces path: a chart that cannot be drawn, or a write that fails
// (a full disk), leaves a file already at path as it was, instead of
// truncated or half written. A new file gets 0666 less the umask, as
// os.Create gives; a replaced one keeps its permission bits.
func (c *Chart) WriteFile(path string) error {
	if err := checkExt(path); err != nil {
		return err
	}
	draw := c.SVG
	if strings.ToLower(filepath.Ext(path)) == ".png" {
		draw = c.PNG
	}
	var b bytes.Buffer
	if err := draw(&b); err != nil {
		return err
	}
	if fi, err := os.Stat(path); err == nil {
		if err := regular(path, fi); err != nil {
			return err
		}
	}
	return cli.ReplaceFile(path, b.Bytes())
}

// regular is cli.Regular as an ErrChart: a named pipe or a device at the
// path (or where it links to) is refused, as cli.ReplaceFile's rename
// would put a regular file in its place (a chart linked to /dev/full
// replaced the device node).
func regular(path string, fi fs.FileInfo) error {
	if err := cli.Regular(path, fi); err != nil {
		return fmt.Errorf("%w: %w", ErrChart, err)
	}
	return nil
}

// CheckFile reports whether WriteFile could write a chart to path: the
// name ends in .svg or .png, it is not a directory or another file that
// is not a regular one (a named pipe, a device), and its directory (the
// directory of the file it links to, for a link) exists and takes a new
// file (a probe file is created there and removed). Commands call it
// before the work whose result they plot, so that a typo or a read-only
// directory costs nothing. Errors wrap ErrChart (and the fs error for the
// directory).
func CheckFile(path string) error {
	if err := checkExt(path); err != nil {
		return err
	}
	if fi, err := os.Stat(path); err == nil {
		if err := regular(path, fi); err != nil {
			return err
		}
	}
	// The temporary file goes beside the file path links to (see
	// WriteFile), which may be in another directory than the link.
	if err := cli.WritableDir(filepath.Dir(cli.LinkTarget(path))); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrChart, path, err)
	}
	return nil
}

// checkExt checks that path names an SVG or PNG file.
func checkExt(path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg", ".png":
		return nil
	}
	return fmt.Errorf("%w: %s: want a .svg or .png file", ErrChart, path)
}

// canvas is what the SVG and PNG back ends both draw on, in pixels from
// the top left.
type canvas interface {
	line(x0, y0, x1, y1 float64, c color.RGBA, width float64)
	dot(x, y, r float64, c color.RGBA)
	// text draws s with its anchor ('l', 'm' or 'r') at x and its
	// baseline at y; vertical text runs upwards from (x, y).
	text(x, y float64, s string, anchor byte, vertical bool, c color.RGBA)
	// pow10 draws "10" with exponent e, right-aligned at x.
	pow10(x, y float64, e int, c color.RGBA)
	// rect fills the rectangle with its top left at (x, y); tip is its
	// hover text where the back end has such a thing (bars.go).
	rect(x, y, w, h float64, c color.RGBA, tip string)
}

var (
	black = color.RGBA{0, 0, 0, 0xff}
	grey  = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
)

// layout is the chart's geometry and scales.
type layout struct {
	w, h                  float64
	left, right, top, bot float64 // plot area
	x0, x1, y0, y1        float64 // data range (x, y in log10 when LogX, LogY)
	logX, logY            bool
	bars                  barGroup  // the Bars series' geometry (bars.go)
	xticks                []float64 // x ticks, when not the default round numbers
}

func (l *layout) px(x float64) float64 {
	if l.logX {
		x = math.Log10(x)
	}
	return l.left + (x-l.x0)/(l.x1-l.x0)*(l.right-l.left)
}

func (l *layout) py(y float64) float64 {
	if l.logY {
		y = math.Log10(y)
	}
	return l.bot - (y-l.y0)/(l.y1-l.y0)*(l.bot-l.top)
}

// plottable reports whether (x, y) has a place on the axes.
func (l *layout) plottable(x, y float64) bool {
	if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return false
	}
	return (!l.logY || y > 0 && math.Log10(y) >= l.y0-1e-9) && (!l.logX || x > 0)
}

func (c *Chart) layout() (*layout, error) {
	w, h := c.Width, c.Height
	if w == 0 {
		w = 720
	}
	if h == 0 {
		h = 480
	}
	if w < 200 || h < 150 {
		return nil, fmt.Errorf("%w: %d × %d is too small", ErrChart, w, h)
	}
	floor := c.MinY
	if floor <= 0 {
		floor = 1e-300
	}
	// The legend sits right of the plot, as wide as its longest name.
	legend := 0
	for _, s := range c.Series {
		legend = max(legend, len([]rune(s.Name)))
	}
	right := float64(w) - float64(48+legend*glyphAdvance*textScale)
	if c.NoLegend {
		right = float64(w) - 24
	}
	l := &layout{w: float64(w), h: float64(h), logX: c.LogX, logY: c.LogY,
		left: 96, right: right, top: 34, bot: float64(h) - 52}
	if l.right-l.left < 100 {
		return nil, fmt.Errorf("%w: %d pixels wide leaves no room for the plot", ErrChart, w)
	}
	x0, x1, y0, y1 := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		if len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("%w: series %q has %d x and %d y", ErrChart, s.Name, len(s.X), len(s.Y))
		}
		for i, x := range s.X {
			y := s.Y[i]
			if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
				continue
			}
			if c.LogY {
				if y < floor {
					continue
				}
				y = math.Log10(y)
			}
			if c.LogX {
				if x <= 0 {
					continue
				}
				x = math.Log10(x)
			}
			x0, x1, y0, y1 = min(x0, x), max(x1, x), min(y0, y), max(y1, y)
		}
	}
	if math.IsInf(x0, 0) {
		return nil, fmt.Errorf("%w: no point to draw", ErrChart)
	}
	if x1 == x0 {
		x0, x1 = x0-1, x1+1
		if c.LogX {
			x0, x1 = x0+0.5, x1-0.5 // a decade around the one value
		}
	}
	// Bars stand centred on their x: leave half a gap on each side, and
	// tick every bar position when there are few enough to label.
	if l.bars = c.bars(); l.bars.series > 0 {
		x0, x1 = min(x0, l.bars.xs[0])-l.bars.gap/2, max(x1, l.bars.xs[len(l.bars.xs)-1])+l.bars.gap/2
		if len(l.bars.xs) <= 24 {
			l.xticks = l.bars.xs
		}
	}
	if len(c.XNames) > 0 {
		l.xticks = nil
		for i := range c.XNames {
			if x := float64(i + 1); !c.LogX || x > 0 {
				l.xticks = append(l.xticks, x)
			}
		}
		x0, x1 = min(x0, 0.5), max(x1, float64(len(c.XNames))+0.5)
	}
	if c.LogY {
		y0, y1 = math.Floor(y0), math.Ceil(y1)
		if y1 == y0 {
			y1++
		}
	} else {
		y0 = min(y0, 0)
		if y1 == y0 {
			y1 = y0 + 1
		}
		if l.bars.series > 0 {
			// Bars stand on 0, which the axis must show when every bar
			// is below it; and headroom over the tallest bar, labelled.
			y1 = roundUp(y0, max(y1, 0))
		}
	}
	l.x0, l.x1, l.y0, l.y1 = x0, x1, y0, y1
	return l, nil
}

// draw lays the whole chart out on cv.
func (c *Chart) draw(cv canvas, l *layout) {
	// Grid, ticks and tick labels.
	for _, e := range yTicks(l) {
		y := l.bot - (e-l.y0)/(l.y1-l.y0)*(l.bot-l.top)
		cv.line(l.left, y, l.right, y, grey, 1)
		if l.logY {
			cv.pow10(l.left-6, y+4, int(e), black)
		} else {
			cv.text(l.left-6, y+4, trimFloat(e), 'r', false, black)
		}
	}
	xt := l.xticks
	if xt == nil {
		xt = xTicks(l)
	}
	for _, x := range xt {
		px := l.px(x)
		cv.line(px, l.bot, px, l.bot+5, black, 1)
		label := trimFloat(x)
		if i := int(x) - 1; len(c.XNames) > 0 && x == math.Trunc(x) && i >= 0 && i < len(c.XNames) {
			label = c.XNames[i]
		}
		cv.text(px, l.bot+18, label, 'm', false, black)
	}
	cv.line(l.left, l.top, l.left, l.bot, black, 1)
	cv.line(l.left, l.bot, l.right, l.bot, black, 1)
	cv.text((l.left+l.right)/2, l.h-12, c.XLabel, 'm', false, black)
	cv.text(20, (l.top+l.bot)/2, c.YLabel, 'm', true, black)
	cv.text((l.left+l.right)/2, 20, c.Title, 'm', false, black)

	// Series, then the legend.
	next, nbars := 0, 0
	ly := l.top + 4
	for _, s := range c.Series {
		col := s.Color
		if col == (color.RGBA{}) {
			col = Palette[next%len(Palette)]
			next++
		}
		if s.Style == Bars {
			drawBars(cv, l, l.bars, nbars, s, col)
			nbars++
		} else {
			drawPoints(cv, l, s, col)
		}
		if c.NoLegend {
			continue
		}
		if s.Name == "" {
			continue // no legend entry
		}
		lx := l.right + 14
		switch s.Style {
		case Bars:
			cv.rect(lx+5, ly-6, 12, 12, col, "")
		case Line:
			cv.line(lx, ly, lx+22, ly, col, 2)
		default:
			cv.dot(lx+11, ly, 3.5, col)
		}
		cv.text(lx+28, ly+4, s.Name, 'l', false, black)
		ly += 18
	}
}

// drawPoints draws a Points or Line series.
func drawPoints(cv canvas, l *layout, s Series, col color.RGBA) {
	var px, py float64
	have := false
	for i, x := range s.X {
		y := s.Y[i]
		if !l.plottable(x, y) {
			have = false
			continue
		}
		qx, qy := l.px(x), l.py(y)
		if s.Style == Line {
			if have {
				cv.line(px, py, qx, qy, col, 2)
			}
		} else {
			cv.dot(qx, qy, 3.5, col)
		}
		px, py, have = qx, qy, true
	}
}

// yTicks returns the y tick positions in axis units (log10 when logY): at
// most about ten.
func yTicks(l *layout) []float64 {
	if l.logY {
		span := l.y1 - l.y0
		step := 1.0
		for _, s := range []float64{1, 2, 5, 10, 20, 25, 50, 100} {
			step = s
			if span/s <= 10 {
				break
			}
		}
		var t []float64
		for e := math.Ceil(l.y0/step) * step; e <= l.y1+1e-9; e += step {
			t = append(t, e)
		}
		return t
	}
	return niceTicks(l.y0, l.y1)
}

// xTicks returns the x tick positions in data units: round numbers, or
// on a log axis 1, 2 and 5 times powers of ten (only the powers when the
// axis spans more than three decades).
func xTicks(l *layout) []float64 {
	if !l.logX {
		return niceTicks(l.x0, l.x1)
	}
	mults := []float64{1, 2, 5}
	if l.x1-l.x0 > 3 {
		mults = mults[:1]
	}
	var t []float64
	for e := math.Floor(l.x0); e <= math.Ceil(l.x1); e++ {
		for _, m := range mults {
			x := m * math.Pow(10, e)
			if lx := math.Log10(x); lx >= l.x0-1e-9 && lx <= l.x1+1e-9 {
				t = append(t, x)
			}
		}
	}
	return t
}

// niceTicks returns round numbers spanning [a, b], at most about ten.
func niceTicks(a, b float64) []float64 {
	raw := (b - a) / 8
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		step = m * mag
		if step >= raw {
			break
		}
	}
	var t []float64
	for x := math.Ceil(a/step) * step; x <= b+step*1e-9; x += step {
		t = append(t, x)
	}
	return t
}

func trimFloat(x float64) string {
	if math.Abs(x) < 1e-12 {
		return "0"
	}
	return strconv.FormatFloat(x, 'g', 6, 64)
}
