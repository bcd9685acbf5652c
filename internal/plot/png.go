package plot

import (
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strconv"
)

// PNG writes the chart as a PNG image. Text is drawn with the package's
// bitmap font at twice its size; a character it lacks shows as '?'.
func (c *Chart) PNG(w io.Writer) error {
	l, err := c.layout()
	if err != nil {
		return err
	}
	img := image.NewRGBA(image.Rect(0, 0, int(l.w), int(l.h)))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	c.draw(&pngCanvas{img: img}, l)
	return png.Encode(w, img)
}

type pngCanvas struct{ img *image.RGBA }

// textScale is the size of a font pixel in image pixels.
const textScale = 2

func (p *pngCanvas) set(x, y int, c color.RGBA) {
	if image.Pt(x, y).In(p.img.Rect) {
		p.img.SetRGBA(x, y, c)
	}
}

// square fills a side × side square centred on (x, y).
func (p *pngCanvas) square(x, y, side float64, c color.RGBA) {
	h := side / 2
	for yy := int(math.Round(y - h)); yy < int(math.Round(y+h)); yy++ {
		for xx := int(math.Round(x - h)); xx < int(math.Round(x+h)); xx++ {
			p.set(xx, yy, c)
		}
	}
}

func (p *pngCanvas) line(x0, y0, x1, y1 float64, c color.RGBA, width float64) {
	steps := int(math.Ceil(2*math.Hypot(x1-x0, y1-y0))) + 1
	for i := 0; i <= steps; i++ {
		t := float64(i) / float64(steps)
		p.square(x0+t*(x1-x0), y0+t*(y1-y0), max(width, 1), c)
	}
}

func (p *pngCanvas) dot(x, y, r float64, c color.RGBA) {
	for yy := int(y - r - 1); yy <= int(y+r+1); yy++ {
		for xx := int(x - r - 1); xx <= int(x+r+1); xx++ {
			dx, dy := float64(xx)+0.5-x, float64(yy)+0.5-y
			if dx*dx+dy*dy <= r*r {
				p.set(xx, yy, c)
			}
		}
	}
}

// glyphAdvance is the width of one character, spacing included, in font
// pixels.
const glyphAdvance = 6

func textWidth(s string, scale int) float64 {
	n := 0
	for range s {
		n++
	}
	return float64(n * glyphAdvance * scale)
}

// glyph draws one character with its baseline at y (the font's bottom row
// sits on it); vertical glyphs are turned a quarter left.
func (p *pngCanvas) glyph(x, y float64, r rune, scale int, vertical bool, c color.RGBA) {
	g, ok := font[r]
	if !ok {
		g = font['?']
	}
	for row := range 7 {
		for col := range 5 {
			if g[row]>>(4-col)&1 == 0 {
				continue
			}
			for sy := range scale {
				for sx := range scale {
					dx, dy := col*scale+sx, (row-6)*scale+sy-scale
					if vertical {
						p.set(int(x)+dy+scale, int(y)-dx, c)
					} else {
						p.set(int(x)+dx, int(y)+dy+scale, c)
					}
				}
			}
		}
	}
}

func (p *pngCanvas) textScaled(x, y float64, s string, anchor byte, vertical bool, scale int, c color.RGBA) {
	w := textWidth(s, scale)
	switch anchor {
	case 'm':
		x, y = shift(x, y, -w/2, vertical)
	case 'r':
		x, y = shift(x, y, -w, vertical)
	}
	for _, r := range s {
		p.glyph(x, y, r, scale, vertical, c)
		x, y = shift(x, y, float64(glyphAdvance*scale), vertical)
	}
}

// shift moves d along the direction of the text.
func shift(x, y, d float64, vertical bool) (float64, float64) {
	if vertical {
		return x, y - d
	}
	return x + d, y
}

func (p *pngCanvas) text(x, y float64, s string, anchor byte, vertical bool, c color.RGBA) {
	p.textScaled(x, y, s, anchor, vertical, textScale, c)
}

func (p *pngCanvas) pow10(x, y float64, e int, c color.RGBA) {
	if e == 0 {
		p.text(x, y, "1", 'r', false, c)
		return
	}
	exp := strconv.Itoa(e)
	ew := textWidth(exp, 1)
	p.textScaled(x, y-8, exp, 'r', false, 1, c)
	p.text(x-ew-1, y, "10", 'r', false, c)
}
