package sim

import (
	"github.com/twochoice/twochoice/bucket"
)

// The levels engine simulates the exact Markov chain on load counts that
// REFERENCE.md ends with. For a rule whose candidates are uniform within
// their part (OneChoice, DChoice, Halves, GoLeft), which bin a ball lands in
// does not matter, only how many bins of each part hold each load. So the
// state is, per part, atLeast[k] = the number of its bins with load ≥ k.
//
// A candidate in part j is a uniform bin of that part: a uniform rank r in
// [0, size_j), where ranks order the part's bins from the fullest down. The
// bin of rank r has load ≥ k exactly when r < atLeast[k], so its load is
// lo + #{k in (lo, hi] : r < atLeast[k]}, lo and hi being the part's least
// and greatest load. Placing a ball at load l adds one to atLeast[l+1]: one
// counter per ball, whatever n is.
//
// The d candidates of a ball are independent draws, so two of them can be
// the same bin: candidates are drawn with replacement, as in the
// balls-into-bins papers and as with independent hashes.
//
// Speed. Loads crowd into a few values (at m = n with two choices, 0 to 4),
// so the fast loop ([levelsChain.fast2]) copies the counts of the lowest
// window levels of each part into a small local array and counts a
// candidate's load with two branch-free compares, taking a branch (rarely
// taken, so well predicted) only for ranks that reach the third level or
// beyond. Ranks are drawn a batch ahead ([rankSource]). A part whose loads
// spread wider than the window (one choice at a large load factor) goes
// through the general loop, which scans or bisects the full counts.

// levelPart is the chain's state for one part.
type levelPart struct {
	size    uint64   // bins in the part
	atLeast []uint64 // atLeast[k]: bins with load ≥ k; zero past hi
	lo, hi  int      // every bin holds ≥ lo balls; none holds more than hi
}

const (
	// window is the number of levels per part that the fast loop keeps
	// locally (a power of two: indices are masked, not bounds-checked).
	window = 8
	// wideSpread is the number of occupied levels above which the general
	// loop bisects instead of scanning.
	wideSpread = 24
)

func newLevelPart(size uint64) levelPart {
	p := levelPart{size: size, atLeast: make([]uint64, 4*window)}
	p.atLeast[0] = size
	return p
}

// level returns the load of the bin of rank r.
func (p *levelPart) level(r uint64) int {
	lo, hi := p.lo, p.hi
	if hi-lo > wideSpread {
		return p.bisect(r)
	}
	l := lo
	// r and the counts are below 2^63, so the sign bit of r - t is r < t.
	for _, t := range p.atLeast[lo+1 : hi+1] {
		l += int((r - t) >> 63)
	}
	return l
}

// bisect finds the largest k with atLeast[k] > r; atLeast is non-increasing
// and atLeast[lo] = size > r.
func (p *levelPart) bisect(r uint64) int {
	a, b := p.lo, p.hi+1 // atLeast[a] > r, atLeast[b] ≤ r
	for b-a > 1 {
		mid := int(uint(a+b) >> 1)
		if p.atLeast[mid] > r {
			a = mid
		} else {
			b = mid
		}
	}
	return a
}

// add places one ball on a bin of load l.
func (p *levelPart) add(l int) {
	l++
	p.atLeast[l]++
	if l > p.hi {
		p.hi = l
	}
	p.tidy()
}

// tidy raises lo past levels every bin has reached and keeps atLeast at
// least a window longer than hi, so window copies never run off its end.
func (p *levelPart) tidy() {
	for p.atLeast[p.lo+1] == p.size {
		p.lo++
	}
	if need := max(p.hi, p.lo+window) + window; need > len(p.atLeast) {
		p.atLeast = append(p.atLeast, make([]uint64, need)...)
	}
}

// histogramInto counts the part's bins by exact load into part j of h.
func (p *levelPart) histogramInto(h *bucket.Histogram, j int) {
	for k := 0; k <= p.hi; k++ {
		if c := p.atLeast[k] - p.atLeast[k+1]; c != 0 {
			h.Add(j, k, c)
		}
	}
}

// levelsBatch is the number of balls whose ranks are drawn at a time.
const levelsBatch = 256

// levelsChain is one run of the levels engine.
//
// When all candidates share one part (OneChoice, DChoice), the ball goes to
// the smallest of its candidates' loads, and since ranks run from the
// fullest bin down, that is the load at the largest of their ranks: the
// chain then draws that one rank per ball ([rankSource] with maxOf) and
// needs no tie-break, because which of two equally loaded bins takes the
// ball leaves the counts the same. With parts (Halves, GoLeft) the part
// that wins matters, and bucket.Placement.Choose decides it.
type levelsChain struct {
	rule   bucket.Placement
	d      int
	cands  int // ranks per ball the chain reads: 1 with one part, else d
	parts  []levelPart
	partOf [8]int // part of candidate j
	src    rankSource
	r      [levelsBatch * 8]uint64
	coins  [levelsBatch]uint64
	// slow turns the fast loops off, for tests: both loops must give the
	// same counts from the same ranks.
	slow bool
}

func newLevelsChain(rule bucket.Placement, d int, n uint64) *levelsChain {
	c := &levelsChain{rule: rule, d: d}
	np := uint64(rule.Parts(d))
	for j := range np {
		// The same split as hashfn's Parts scheme: part j is
		// [⌊j·n/d⌋, ⌊(j+1)·n/d⌋). n ≤ 2^40 and j ≤ 8: no overflow.
		c.parts = append(c.parts, newLevelPart((j+1)*n/np-j*n/np))
	}
	sizes := make([]uint64, d)
	for j := range d {
		if len(c.parts) > 1 {
			c.partOf[j] = j
		}
		sizes[j] = c.parts[c.partOf[j]].size
	}
	if len(c.parts) == 1 {
		c.cands = 1
		c.src = newRankSource(sizes, 0)
		c.src.maxOf = true
		return c
	}
	c.cands = d
	var coinBits uint
	switch {
	case rule == bucket.GoLeft:
	case d == 2:
		coinBits = 1
	default:
		coinBits = 32
	}
	c.src = newRankSource(sizes, coinBits)
	return c
}

// throw places m balls.
func (c *levelsChain) throw(m uint64, g *stream) {
	d := c.cands
	for m > 0 {
		b := int(min(m, levelsBatch))
		m -= uint64(b)
		r, coins := c.r[:b*d], c.coins[:b]
		c.src.fill(g, r, coins)
		i := 0
		switch {
		case c.slow:
		case d == 1:
			i = c.fast1(r, coins)
		case d == 2:
			i = c.fast2(r, coins)
		}
		c.general(r[i*d:], coins[i:])
	}
}

// general places the balls of ranks r and coins c one by one on the full
// counts, for any d and any spread of loads.
func (c *levelsChain) general(r, coins []uint64) {
	d := c.cands
	var loads [8]uint32
	for i, coin := range coins {
		for j := range d {
			loads[j] = uint32(c.parts[c.partOf[j]].level(r[i*d+j]))
		}
		k := 0
		if d > 1 {
			k = c.rule.Choose(loads[:d], coin)
		}
		c.parts[c.partOf[k]].add(int(loads[k]))
	}
}

// fast1 is the window loop for one candidate. It returns how many balls it
// placed: all, unless a load left the window.
func (c *levelsChain) fast1(r, coins []uint64) int {
	p := &c.parts[0]
	if p.hi-p.lo > window-3 {
		return 0
	}
	var w [window]uint64
	copy(w[:], p.atLeast[p.lo:])
	i := 0
	for i < len(coins) {
		x := r[i]
		i++
		a := int((x-w[1])>>63) + int((x-w[2])>>63)
		if x < w[3] {
			a = deepLevel(&w, x)
		}
		w[(a+1)&(window-1)]++
		if a+1 >= window-2 {
			break
		}
	}
	c.unwindow(p, w[:])
	return i
}

// fast2 is the window loop for two candidates, the loop the published sweep
// spends its time in. The winner's counter is picked by index, not by a
// branch on Choose2's answer: which candidate wins is a coin flip to a
// branch predictor, and a mispredict costs more than the rest of the ball.
func (c *levelsChain) fast2(r, coins []uint64) int {
	p0, p1 := &c.parts[c.partOf[0]], &c.parts[c.partOf[1]]
	if p0.hi-p0.lo > window-3 || p1.hi-p1.lo > window-3 {
		return 0
	}
	// w[0:window] is part 0 from its level lo0 up, w[window:] part 1 from
	// lo1; under DChoice both candidates read the first half (off1 = 0).
	var w [2 * window]uint64
	copy(w[:window], p0.atLeast[p0.lo:])
	off1 := 0
	if p1 != p0 {
		off1 = window
		copy(w[window:], p1.atLeast[p1.lo:])
	}
	lo0, lo1 := uint32(p0.lo), uint32(p1.lo)
	rule := c.rule
	i := 0
	for i < len(coins) {
		x, y := r[2*i], r[2*i+1]
		coin := coins[i]
		i++
		a := int((x-w[1])>>63) + int((x-w[2])>>63)
		if x < w[3] {
			a = deepLevel((*[window]uint64)(w[:window]), x)
		}
		b := int((y-w[off1+1])>>63) + int((y-w[off1+2])>>63)
		if y < w[off1+3] {
			b = deepLevel((*[window]uint64)(w[off1:off1+window]), y)
		}
		// e: the relative level raised; at: its index in w. Selected
		// with a mask, not a branch.
		k := rule.Choose2(lo0+uint32(a), lo1+uint32(b), coin)
		mask := -k
		ea, eb := a+1, b+1
		e := ea ^ ((ea ^ eb) & mask)
		at := e + (off1 & mask)
		w[at&(2*window-1)]++
		if e >= window-2 {
			break
		}
	}
	c.unwindow(p0, w[:window])
	if p1 != p0 {
		c.unwindow(p1, w[window:])
	}
	return i
}

// deepLevel is the relative load of rank x in a window, for a rank that
// reaches the window's third level.
func deepLevel(w *[window]uint64, x uint64) int {
	a := 3
	for _, t := range w[4:] {
		a += int((x - t) >> 63)
	}
	return a
}

// unwindow writes a part's window back and restores its invariants.
func (c *levelsChain) unwindow(p *levelPart, w []uint64) {
	copy(p.atLeast[p.lo:], w)
	for k := window - 1; k > 0; k-- {
		if w[k] != 0 {
			p.hi = max(p.hi, p.lo+k)
			break
		}
	}
	p.tidy()
}

// histogram returns the bins counted by load, per part.
func (c *levelsChain) histogram() *bucket.Histogram {
	h := bucket.NewHistogram(len(c.parts))
	for j := range c.parts {
		c.parts[j].histogramInto(h, j)
	}
	return h
}
