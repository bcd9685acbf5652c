package plot

import (
	"bufio"
	"fmt"
	"html"
	"image/color"
	"io"
)

// SVG writes the chart as an SVG document.
func (c *Chart) SVG(w io.Writer) error {
	l, err := c.layout()
	if err != nil {
		return err
	}
	s := &svgCanvas{w: bufio.NewWriter(w)}
	fmt.Fprintf(s.w, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n", l.w, l.h, l.w, l.h)
	fmt.Fprintf(s.w, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	c.draw(s, l)
	fmt.Fprintln(s.w, "</svg>")
	return s.w.Flush()
}

type svgCanvas struct{ w *bufio.Writer }

func rgb(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

func (s *svgCanvas) line(x0, y0, x1, y1 float64, c color.RGBA, width float64) {
	fmt.Fprintf(s.w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%g"/>`+"\n", x0, y0, x1, y1, rgb(c), width)
}

func (s *svgCanvas) dot(x, y, r float64, c color.RGBA) {
	fmt.Fprintf(s.w, `<circle cx="%.1f" cy="%.1f" r="%g" fill="%s"/>`+"\n", x, y, r, rgb(c))
}

var anchors = map[byte]string{'l': "start", 'm': "middle", 'r': "end"}

func (s *svgCanvas) text(x, y float64, t string, anchor byte, vertical bool, c color.RGBA) {
	if t == "" {
		return
	}
	rot := ""
	if vertical {
		rot = fmt.Sprintf(` transform="rotate(-90 %.1f %.1f)"`, x, y)
	}
	fmt.Fprintf(s.w, `<text x="%.1f" y="%.1f" text-anchor="%s" fill="%s"%s>%s</text>`+"\n", x, y, anchors[anchor], rgb(c), rot, html.EscapeString(t))
}

func (s *svgCanvas) pow10(x, y float64, e int, c color.RGBA) {
	if e == 0 {
		s.text(x, y, "1", 'r', false, c)
		return
	}
	fmt.Fprintf(s.w, `<text x="%.1f" y="%.1f" text-anchor="end" fill="%s">10<tspan dy="-6" font-size="9">%d</tspan></text>`+"\n", x, y, rgb(c), e)
}
