package plot

import (
	"bytes"
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/internal/testutil"
)

func sample() *Chart {
	c := &Chart{Title: "two choices, n = 2^20", XLabel: "load k", YLabel: "share of bins with load ≥ k", LogY: true}
	c.Series = append(c.Series,
		Series{Name: "dchoice sim", X: []float64{0, 1, 2, 3, 4}, Y: []float64{1, 0.76, 0.23, 0.0089, 6e-6}, Style: Points, Color: Palette[0]},
		Series{Name: "dchoice fluid", X: []float64{0, 1, 2, 3, 4, 5, 6}, Y: []float64{1, 0.76, 0.23, 0.0089, 6e-6, 1.3e-12, 1e-300}, Style: Line, Color: Palette[0]},
		Series{Name: "goleft fluid", X: []float64{0, 1, 2, 3, 4, 5}, Y: []float64{1, 0.77, 0.22, 0.0045, 5e-8, 0}, Style: Line, Color: Palette[1]},
	)
	return c
}

func TestSVG(t *testing.T) {
	var b bytes.Buffer
	if err := sample().SVG(&b); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{"<svg", "</svg>", "<circle", "<line", "dchoice fluid", "10<tspan", ">-300</tspan>", "share of bins with load ≥ k"} {
		if !strings.Contains(s, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	// Five simulated points, each a circle, plus the legend's.
	if got := strings.Count(s, "<circle"); got != 6 {
		t.Errorf("%d circles, want 6", got)
	}
}

func TestPNG(t *testing.T) {
	var b bytes.Buffer
	if err := sample().PNG(&b); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	if r := img.Bounds(); r.Dx() != 720 || r.Dy() != 480 {
		t.Fatalf("size %v", r)
	}
	// Something of the first series' colour was drawn.
	found := false
	for y := 0; y < 480 && !found; y++ {
		for x := 0; x < 720; x++ {
			r, g, bb, _ := img.At(x, y).RGBA()
			c := Palette[0]
			if uint8(r>>8) == c.R && uint8(g>>8) == c.G && uint8(bb>>8) == c.B {
				found = true
				break
			}
		}
	}
	if !found {
		t.Fatal("no pixel of the first series")
	}
	if dir := os.Getenv("PLOT_OUT"); dir != "" {
		_ = sample().WriteFile(filepath.Join(dir, "sample.png"))
		_ = sample().WriteFile(filepath.Join(dir, "sample.svg"))
	}
}

func TestErrors(t *testing.T) {
	if err := (&Chart{}).SVG(&bytes.Buffer{}); !errors.Is(err, ErrChart) {
		t.Errorf("empty chart: %v", err)
	}
	bad := &Chart{Series: []Series{{X: []float64{1}, Y: nil}}}
	if err := bad.PNG(&bytes.Buffer{}); !errors.Is(err, ErrChart) {
		t.Errorf("mismatched series: %v", err)
	}
	if err := sample().WriteFile(filepath.Join(t.TempDir(), "x.gif")); !errors.Is(err, ErrChart) {
		t.Errorf("gif: %v", err)
	}
	onlyZero := &Chart{LogY: true, Series: []Series{{X: []float64{1}, Y: []float64{0}}}}
	if err := onlyZero.SVG(&bytes.Buffer{}); !errors.Is(err, ErrChart) {
		t.Errorf("nothing positive on a log axis: %v", err)
	}
}

func TestTicks(t *testing.T) {
	l := &layout{logY: true, y0: -300, y1: 0}
	ticks := yTicks(l)
	if len(ticks) > 11 || ticks[0] != -300 || ticks[len(ticks)-1] != 0 {
		t.Fatalf("log ticks %v", ticks)
	}
	for _, x := range niceTicks(0, 7) {
		if x != math.Round(x) {
			t.Fatalf("ticks over 0..7: %v", niceTicks(0, 7))
		}
	}
	for r, g := range font {
		for _, row := range g {
			if row >= 32 {
				t.Fatalf("glyph %q wider than 5", r)
			}
		}
	}
}

// A log x axis places 1, 2 and 5 times powers of ten, evenly per decade,
// and leaves out points at x ≤ 0.
func TestLogX(t *testing.T) {
	c := &Chart{LogX: true, Series: []Series{{Name: "hit ratio", X: []float64{0, 1000, 10000, 100000}, Y: []float64{5, 30, 50, 70}, Style: Points}}}
	l, err := c.layout()
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(l.x0-3) > 1e-12 || math.Abs(l.x1-5) > 1e-12 {
		t.Fatalf("x range %v..%v in log10, want 3..5", l.x0, l.x1)
	}
	want := []float64{1000, 2000, 5000, 10000, 20000, 50000, 100000}
	got := xTicks(l)
	if len(got) != len(want) {
		t.Fatalf("ticks %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-6*want[i] {
			t.Fatalf("ticks %v, want %v", got, want)
		}
	}
	if d1, d2 := l.px(10000)-l.px(1000), l.px(100000)-l.px(10000); math.Abs(d1-d2) > 1e-9 {
		t.Fatalf("decades %v and %v pixels wide", d1, d2)
	}
	var b bytes.Buffer
	if err := c.SVG(&b); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "<circle"); n != 4 { // 3 points and the legend's
		t.Fatalf("%d circles, want 4 (the point at x = 0 left out)", n)
	}
	if !strings.Contains(b.String(), ">20000<") {
		t.Fatal("no tick label 20000")
	}
}

// A series without a name draws its points but takes no legend entry.
func TestUnnamedSeries(t *testing.T) {
	c := &Chart{Series: []Series{
		{Name: "lru", X: []float64{1, 2}, Y: []float64{3, 4}, Style: Line},
		{X: []float64{1, 2}, Y: []float64{3, 4}, Style: Points},
	}}
	var b bytes.Buffer
	if err := c.SVG(&b); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "<circle"); n != 2 {
		t.Fatalf("%d circles, want the 2 points and no legend dot", n)
	}
}

func TestCheckFile(t *testing.T) {
	dir := t.TempDir()
	if err := CheckFile(filepath.Join(dir, "a.SVG")); err != nil {
		t.Errorf("a.SVG: %v", err)
	}
	if err := CheckFile("b.png"); err != nil {
		t.Errorf("b.png in the working directory: %v", err)
	}
	// A directory where the file would go, or a directory that takes no
	// file (a read-only file system, where root can mount one), fails
	// WriteFile after the work: CheckFile must say so before it.
	if err := os.Mkdir(filepath.Join(dir, "d.svg"), 0o755); err != nil {
		t.Fatal(err)
	}
	bads := []string{filepath.Join(dir, "out.txt"), filepath.Join(dir, "nosuch", "x.svg"), filepath.Join(dir, "a.SVG", "x.png"), filepath.Join(dir, "d.svg")}
	if os.Geteuid() == 0 {
		bads = append(bads, filepath.Join(testutil.ReadOnlyDir(t), "x.svg"))
	}
	for _, bad := range bads {
		if err := CheckFile(bad); !errors.Is(err, ErrChart) {
			t.Errorf("%s: %v, want ErrChart", bad, err)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Errorf("CheckFile left files: %v", left)
	}
}

// A chart that cannot be drawn, or cannot be written, leaves the file
// already at the path as it was, never truncated or half written (WriteFile
// writes a temporary file and renames it). A file replaced keeps its
// permission bits.
func TestWriteFileKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"old.svg", "old.png"} {
		path := filepath.Join(dir, name)
		if err := sample().WriteFile(path); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o600); err != nil {
			t.Fatal(err)
		}
		old, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		bad := sample()
		bad.Width = 100
		if err := bad.WriteFile(path); !errors.Is(err, ErrChart) {
			t.Errorf("%s: %v, want ErrChart", name, err)
		}
		if now, _ := os.ReadFile(path); !bytes.Equal(now, old) {
			t.Errorf("%s: a chart that could not be drawn changed the file (%d bytes, were %d)", name, len(now), len(old))
		}
		other := sample()
		other.Title = "another"
		if err := other.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: replaced with mode %v (%v), want 0600", name, fi.Mode(), err)
		}
	}
	if os.Geteuid() == 0 {
		// A full disk: the write fails, and the old chart stays whole.
		full := testutil.SmallTmpfs(t, "64k")
		path := filepath.Join(full, "old.svg")
		if err := sample().WriteFile(path); err != nil {
			t.Fatal(err)
		}
		old, _ := os.ReadFile(path)
		os.WriteFile(filepath.Join(full, "filler"), make([]byte, 1<<20), 0o644) // fails once the disk is full
		big := sample()
		for i := range 40 {
			big.Series = append(big.Series, Series{Name: strings.Repeat("x", i%5+1), X: []float64{0, 1, 2, 3}, Y: []float64{1, 0.5, 0.1, 0.01}, Style: Line})
		}
		if err := big.WriteFile(path); err == nil || !strings.Contains(err.Error(), "no space left") {
			t.Errorf("writing to a full disk: %v", err)
		}
		if now, _ := os.ReadFile(path); !bytes.Equal(now, old) {
			t.Errorf("a failed write changed the chart (%d bytes, were %d)", len(now), len(old))
		}
		dir = full
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
