package sim

import "math"

// Block mode: the levels chain a block of balls at a time, for large parts.
//
// Take a snapshot of the counts and look at the next W balls. Until they
// are placed, each count atLeast[k] grows by at most W, so for a candidate
// of rank r the snapshot settles its load unless r lies within W above
// some count: a rank in [atLeast[l+1] + W, atLeast[l]) has load l, whatever
// the W balls do. Call such a candidate sure, and a ball sure when all its
// candidates are. Given the snapshot, sure balls are independent, and each
// lands at (part, level) with a probability that depends on the snapshot
// alone: the sure balls of a block are a multinomial draw, and only their
// counts matter, not their order. The chance q that a ball is not sure is
// about 2·d·levels·W/size, so the number of sure balls before the first
// unsure one is geometric with parameter q: draw it, add the sure balls'
// multinomial counts, place the unsure ball one by one from the current
// counts (its candidates drawn uniformly from the unsure and sure rank sets
// as its case requires), and start a new block. With W ≈ √(size / (d ·
// levels)), about one ball per block is placed singly and a block costs a
// dozen binomial draws, so a ball costs a fraction of a nanosecond at 2^30
// bins.
//
// The law is the chain's law exactly; the only approximation is floating
// point, in the multinomial's probabilities (products of ratios of counts)
// and in the binomial and geometric samplers (binomial.go), errors around
// 10⁻¹⁶ relative. Decisions among candidate levels still go through
// bucket.Placement.Choose2: each pair of sure levels is decided by it, a tie
// under a coin rule once with each coin.

// blockMin is the smallest block worth its draws (a block costs about a
// microsecond, a ball placed singly 5 to 10 ns); below it (parts of less
// than about 2^18 bins at m = n) the chain goes ball by ball.
const blockMin = 128

// blockWidth returns W for the chain's current state, or 0 when block mode
// does not pay (or does not apply: more than two candidates).
func (c *levelsChain) blockWidth() uint64 {
	if c.d > 2 || c.noBlocks {
		return 0
	}
	size := c.parts[0].size
	spread := 0
	for j := range c.parts {
		size = min(size, c.parts[j].size)
		spread = max(spread, c.parts[j].hi-c.parts[j].lo+1)
	}
	w := uint64(math.Sqrt(float64(size) / float64(c.d*(spread+1))))
	if w < blockMin {
		return 0
	}
	return w
}

// interval is a range [lo, hi) of ranks.
type interval struct{ lo, hi uint64 }

// sureSets returns, for part p and width w, the sure rank interval of each
// level from p.lo up (ranks in out[l-p.lo] have load l for the next w
// balls) and their total length.
func sureSets(p *levelPart, w uint64, out []interval) ([]interval, uint64) {
	out = out[:0]
	var total uint64
	for l := p.lo; l <= p.hi; l++ {
		top := p.atLeast[l] // ranks below have load ≥ l
		bottom := p.atLeast[l+1] + w
		iv := interval{bottom, top}
		if bottom >= top {
			iv = interval{top, top}
		}
		total += iv.hi - iv.lo
		out = append(out, iv)
	}
	return out, total
}

// pick maps x in [0, total length) onto the union of ivs (want = true) or
// onto its complement in [0, size) (want = false).
func pick(ivs []interval, size, x uint64, want bool) uint64 {
	if want {
		for _, iv := range ivs {
			if n := iv.hi - iv.lo; x < n {
				return iv.lo + x
			} else {
				x -= n
			}
		}
		panic("sim: rank past the sure set")
	}
	// The complement, walking the gaps in rank order: the sets run from the
	// top level (lowest ranks) down, so sort by lo implicitly by walking
	// the slice backwards.
	prev := uint64(0)
	for i := len(ivs) - 1; i >= 0; i-- {
		iv := ivs[i]
		if iv.lo > prev {
			if n := iv.lo - prev; x < n {
				return prev + x
			} else {
				x -= n
			}
		}
		prev = max(prev, iv.hi)
	}
	if x < size-prev {
		return prev + x
	}
	panic("sim: rank past the unsure set")
}

// category is where a sure ball lands: part j, raising a bin of load l.
type category struct {
	j, l int
	p    float64
}

// throwBlocks places up to m balls in block mode and returns how many it
// placed; it stops early when blocks no longer pay.
func (c *levelsChain) throwBlocks(m uint64, g *stream) uint64 {
	var placed uint64
	var sets [2][]interval
	var sure [2]uint64
	var cats []category
	for placed < m {
		w := c.blockWidth()
		if w == 0 {
			break
		}
		w = min(w, m-placed)
		// Candidate k reads part partOf[k]; under one-part rules both
		// candidates read part 0.
		var u [2]float64 // chance that candidate k is unsure
		for k := range c.d {
			p := &c.parts[c.partOf[k]]
			sets[k], sure[k] = sureSets(p, w, sets[k])
			u[k] = 1 - float64(sure[k])/float64(p.size)
		}
		q := u[0]
		if c.d == 2 {
			q = 1 - (1-u[0])*(1-u[1])
		}
		n := w
		unsure := false
		if q > 0 {
			if j := g.geometric(q); j < w {
				n, unsure = j, true
			}
		}
		if n > 0 {
			cats = c.sureCategories(sets, sure, cats[:0])
			c.addMultinomial(g, n, cats)
			placed += n
		}
		if unsure {
			c.placeUnsure(g, sets, sure, u, q)
			placed++
		}
	}
	return placed
}

// sureCategories lists where a sure ball lands, with probabilities, by
// part and then level. Each place a ball can land is listed once, so that
// the multinomial takes one binomial per place.
//
// With two candidates, every rule sends a ball to the strictly less loaded
// one and settles a tie the same way at every level (c.tie0, taken from
// bucket.Placement.Choose2; a test checks both against Choose2 for every
// pair of byte loads). So candidate 0 wins at its level l with the chance
// that candidate 1 is sure at a level above l, plus tie0 times the chance
// that it is sure at l: suffix sums over the levels give every place in
// O(levels), where deciding each pair of levels with Choose2 took
// O(levels²) calls, a fifth of a block's time under GoLeft at 2^20 bins.
func (c *levelsChain) sureCategories(sets [2][]interval, sure [2]uint64, cats []category) []category {
	p0 := &c.parts[c.partOf[0]]
	n0 := len(sets[0])
	if c.d == 1 {
		for i := range n0 {
			if s := shareOf(sets[0][i], sure[0]); s > 0 {
				cats = append(cats, category{0, p0.lo + i, s})
			}
		}
		return cats
	}
	p1 := &c.parts[c.partOf[1]]
	n1 := len(sets[1])
	// acc holds the places' chances (candidate 0's levels, then candidate
	// 1's), then each candidate's shares by level and their suffix sums.
	need := 3 * (n0 + n1 + 1)
	if cap(c.acc) < need {
		c.acc = make([]float64, need)
	}
	acc := c.acc[:n0+n1]
	a, b := c.acc[n0+n1:2*n0+n1], c.acc[2*n0+n1:2*(n0+n1)]
	sufA, sufB := c.acc[2*(n0+n1):3*n0+2*n1+1], c.acc[3*n0+2*n1+1:need]
	suffixShares(sets[0], sure[0], a, sufA)
	suffixShares(sets[1], sure[1], b, sufB)
	for i, s := range a {
		eq, above := atLevel(b, sufB, p0.lo+i-p1.lo)
		acc[i] = s * (above + c.tie0*eq)
	}
	for j, s := range b {
		eq, above := atLevel(a, sufA, p1.lo+j-p0.lo)
		acc[n0+j] = s * (above + (1-c.tie0)*eq)
	}
	if c.partOf[0] == c.partOf[1] {
		// One part: both candidates' sure levels are the same levels.
		for i := range n0 {
			acc[i] += acc[n0+i]
		}
		n1 = 0
	}
	for i, w := range acc[:n0] {
		if w > 0 {
			cats = append(cats, category{c.partOf[0], p0.lo + i, w})
		}
	}
	for j, w := range acc[n0 : n0+n1] {
		if w > 0 {
			cats = append(cats, category{c.partOf[1], p1.lo + j, w})
		}
	}
	return cats
}

// shareOf is the chance that a sure candidate lies in iv, sure being the
// length of its part's whole sure set.
func shareOf(iv interval, sure uint64) float64 {
	return float64(iv.hi-iv.lo) / float64(sure)
}

// suffixShares writes the share of each sure level into s and the sums of
// the shares from each level up into suf (len(s)+1 long, suf[len(s)] = 0).
func suffixShares(sets []interval, sure uint64, s, suf []float64) {
	suf[len(s)] = 0
	for i := len(s) - 1; i >= 0; i-- {
		s[i] = shareOf(sets[i], sure)
		suf[i] = suf[i+1] + s[i]
	}
}

// atLevel returns a candidate's chance of being sure at its i-th sure
// level and above it, from its shares s and their suffix sums suf; i may
// lie outside the levels.
func atLevel(s, suf []float64, i int) (eq, above float64) {
	switch {
	case i < 0:
		return 0, suf[0]
	case i >= len(s):
		return 0, 0
	}
	return s[i], suf[i+1]
}

// addMultinomial throws n sure balls into the categories: counts by
// sequential binomials.
func (c *levelsChain) addMultinomial(g *stream, n uint64, cats []category) {
	rest := 0.0
	for _, ct := range cats {
		rest += ct.p
	}
	for i, ct := range cats {
		if n == 0 {
			break
		}
		var x uint64
		if i == len(cats)-1 {
			x = n
		} else {
			x = g.binomial(n, min(ct.p/rest, 1))
			rest -= ct.p
		}
		if x > 0 {
			p := &c.parts[ct.j]
			p.atLeast[ct.l+1] += x
			p.hi = max(p.hi, ct.l+1)
			p.tidy()
			n -= x
		}
	}
}

// placeUnsure draws the candidates of a ball known to be unsure (at least
// one candidate outside its sure set) and places it from the current
// counts.
func (c *levelsChain) placeUnsure(g *stream, sets [2][]interval, sure [2]uint64, u [2]float64, q float64) {
	var unsureCand [2]bool
	if c.d == 1 {
		unsureCand[0] = true
	} else {
		// Which candidates are unsure, given that one is.
		x := g.float() * q
		switch a, b := u[0]*(1-u[1]), (1-u[0])*u[1]; {
		case x < a:
			unsureCand[0] = true
		case x < a+b:
			unsureCand[1] = true
		default:
			unsureCand[0], unsureCand[1] = true, true
		}
	}
	var loads [2]uint32
	for k := range c.d {
		p := &c.parts[c.partOf[k]]
		var r uint64
		if unsureCand[k] {
			r = pick(sets[k], p.size, g.below(p.size-sure[k]), false)
		} else {
			r = pick(sets[k], p.size, g.below(sure[k]), true)
		}
		loads[k] = uint32(p.level(r))
	}
	k := 0
	if c.d == 2 {
		k = c.rule.Choose2(loads[0], loads[1], g.next())
	}
	c.parts[c.partOf[k]].add(int(loads[k]))
}
