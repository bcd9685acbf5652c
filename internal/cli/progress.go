package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// IsTerminal reports whether w is a terminal: an *os.File that answers
// the terminal ioctl (isTerminal, terminal_linux.go), or, where there is
// none here, a character device (terminal_other.go). Asking the device
// rather than its mode matters for 2>/dev/null: /dev/null is a character
// device, and the bar was drawn into it.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

// Progress draws a one-line progress bar with an ETA on a terminal, and
// nothing anywhere else (a file, a pipe, or when quiet). It is safe for
// concurrent use and redraws at most ten times a second. Work done within
// showAfter draws nothing: a bar for it would only flicker.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	on    bool
	label string
	start time.Time
	last  time.Time
	width int // of the last line drawn, to clear it
	now   func() time.Time
}

// showAfter is how long work runs before its bar is first drawn: a
// command that ends sooner (a small sim, a load of a thousand keys) drew
// a bar and cleared it at once, a flicker on the terminal and a line of
// escapes in a terminal's log.
const showAfter = 500 * time.Millisecond

// NewProgress returns a bar on w, drawn only when w is a terminal and quiet
// is false.
func NewProgress(w io.Writer, label string, quiet bool) *Progress {
	return &Progress{w: w, on: !quiet && IsTerminal(w), label: label, start: time.Now(), now: time.Now}
}

// On reports whether the bar is drawn. A caller whose progress detail
// costs something to format (a Sprintf per simulation run, say) can skip
// the work when it is not.
func (p *Progress) On() bool { return p != nil && p.on }

// Update shows the fraction done (0 to 1) and a detail such as "3/8 runs".
func (p *Progress) Update(frac float64, detail string) {
	if p == nil || !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if now.Sub(p.start) < showAfter || now.Sub(p.last) < 100*time.Millisecond && frac < 1 {
		return
	}
	p.last = now
	line := p.line(frac, detail, now.Sub(p.start))
	pad := max(p.width-len(line), 0)
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
	p.width = len(line)
}

// line renders the bar.
func (p *Progress) line(frac float64, detail string, elapsed time.Duration) string {
	frac = min(max(frac, 0), 1)
	const cells = 30
	full := int(frac * cells)
	eta := "ETA --"
	if frac > 0.001 && elapsed > time.Second/2 {
		left := time.Duration(float64(elapsed) * (1 - frac) / frac)
		eta = "ETA " + left.Round(time.Second).String()
	}
	return fmt.Sprintf("%s [%s%s] %3.0f%% %s %s", p.label, strings.Repeat("#", full), strings.Repeat(".", cells-full), 100*frac, detail, eta)
}

// Done clears the bar.
func (p *Progress) Done() {
	if p == nil || !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.width > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
		p.width = 0
	}
}
