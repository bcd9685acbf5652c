package sim

import "math"

// Block mode: the levels chain a block of balls at a time, for large parts.
//
// Take a snapshot of the counts and give each count atLeast[k] (a
// boundary between loads) a margin M[k]. While no boundary has grown past
// its margin, a candidate of rank r has the load the snapshot gives it
// unless r lies within the margin above a boundary: a rank in
// [atLeast[l+1] + M[l+1], atLeast[l]) has load l. Call such a candidate
// sure, and a ball sure when all its candidates are. Given the snapshot,
// sure balls are independent, and each lands at (part, level) with a
// probability that depends on the snapshot alone: the sure balls of a
// block are a multinomial draw, and only their counts matter, not their
// order. The number of sure balls before the first unsure one is geometric
// with parameter q, the chance that a ball is unsure: draw it (capped at
// the block's width W), draw the sure balls' multinomial counts, place the
// unsure ball one by one from the current counts (its candidates drawn
// uniformly from the unsure and sure rank sets as its case requires), and
// start a new block.
//
// A sure ball raises the boundary above its level, so the snapshot holds
// only while each boundary has grown by at most its margin. Margins of W
// (what a block can add at most) always hold, but every boundary's margin
// counts against the sure sets, so a candidate is unsure with chance
// levels·W/size. A boundary grows by the balls landing on the level below
// it, about W times that level's share, so block mode gives each boundary
// that much and three standard deviations more (margins), and handles the
// rare block whose counts pass a margin exactly: the balls came in a
// uniformly random order, so it draws that order until the first ball that
// takes a boundary past its margin and keeps the balls up to it
// (untilMargin), a prefix up to a stopping time, which has the chain's law.
// The margins then add up to about W per part instead of levels·W, and with
// W ≈ √(size / (1.5·d)) a block places a few hundred balls at 2^20 bins
// for a dozen binomial draws, so a ball costs a fraction of a nanosecond at
// 2^30 bins.
//
// The law is the chain's law exactly; the only approximation is floating
// point, in the multinomial's probabilities (products of ratios of counts)
// and in the binomial and geometric samplers (binomial.go), errors around
// 10⁻¹⁶ relative. Decisions among candidate levels follow
// bucket.Placement.Choose2 (sureCategories).

// blockMin is the smallest block worth its draws (a block costs about a
// microsecond, a ball placed singly 5 to 10 ns); below it the chain goes
// ball by ball.
const blockMin = 128

// blockShape sets the block width W = √(size / (blockShape·d)). A block
// ends at its first unsure ball, whose chance q grows with W (the margins
// add up to about W a part), or after W balls; the balls a block places,
// about min(W, 1/q), are most for W near √(size/d). Measured at m = n
// (BenchmarkLevels, 2^19 to 2^22 bins), 1.5 was the fastest of 0.75, 1.5
// and 3: up to 2× faster than W = √(size / (d · levels)), the width before
// margins followed the shares.
const blockShape = 1.5

// blockWidth returns W for the chain's current state, or 0 when block mode
// does not pay (or does not apply: more than two candidates).
func (c *levelsChain) blockWidth() uint64 {
	if c.d > 2 || c.noBlocks {
		return 0
	}
	size := c.parts[0].size
	for j := range c.parts {
		size = min(size, c.parts[j].size)
	}
	w := uint64(math.Sqrt(float64(size) / (float64(c.d) * blockShape)))
	if w < blockMin {
		return 0
	}
	return w
}

// interval is a range [lo, hi) of ranks.
type interval struct{ lo, hi uint64 }

// sureSets returns, for part p and the margins marg of its boundaries
// (marg[i] for the count atLeast[p.lo+i+1], the boundary below level
// p.lo+i), the sure rank interval of each level from p.lo up (ranks in
// out[l-p.lo] have load l while that boundary has grown by at most its
// margin) and their total length.
func sureSets(p *levelPart, marg []uint64, out []interval) ([]interval, uint64) {
	out = out[:0]
	var total uint64
	for l := p.lo; l <= p.hi; l++ {
		top := p.atLeast[l] // ranks below have load ≥ l
		bottom := p.atLeast[l+1] + marg[l-p.lo]
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
	b := &c.blocks
	for placed < m {
		w := c.blockWidth()
		if w == 0 {
			break
		}
		w = min(w, m-placed)
		// Candidate k reads part partOf[k]; under one-part rules both
		// candidates read part 0.
		for j := range c.parts {
			b.marg[j] = c.margins(j, w, b.marg[j])
		}
		var u [2]float64 // chance that candidate k is unsure
		for k := range c.d {
			j := c.partOf[k]
			p := &c.parts[j]
			if k > 0 && j == c.partOf[0] {
				// One part: the second candidate's sure sets are the first's.
				b.sets[k], b.sure[k] = b.sets[0], b.sure[0]
			} else {
				b.sets[k], b.sure[k] = sureSets(p, b.marg[j], b.sets[k])
			}
			u[k] = 1 - float64(b.sure[k])/float64(p.size)
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
			b.cats = c.sureCategories(b.sets, b.sure, b.cats[:0])
			x := c.multinomial(g, n, b.cats)
			if c.overMargin(x) {
				// A boundary would pass its margin within the block: keep
				// the balls up to the one that takes it past (the rest,
				// and the unsure ball, were drawn from sure sets that no
				// longer hold) and start a new block after it.
				n, unsure = c.untilMargin(g, x), false
				b.cuts++
			}
			for i, ct := range b.cats {
				if x[i] > 0 {
					p := &c.parts[ct.j]
					p.atLeast[ct.l+1] += x[i]
					p.hi = max(p.hi, ct.l+1)
					p.tidy()
				}
			}
			placed += n
		}
		if unsure {
			c.placeUnsure(g, b.sets, b.sure, u, q)
			placed++
		}
	}
	return placed
}

// blockScratch is block mode's state and scratch space, kept in the chain
// so that blocks allocate nothing.
type blockScratch struct {
	sets [2][]interval
	sure [2]uint64
	// cats: where the sure balls of the last block with any landed, by
	// part and then level; empty before the first of the run. Their
	// chances set the next block's margins.
	cats []category
	// marg[j][i]: the margin of part j's boundary atLeast[lo+i+1] in the
	// current block.
	marg [2][]uint64
	x    []uint64  // the current block's counts, by category
	acc  []float64 // sureCategories' scratch
	cuts uint64    // blocks ended at a margin, for tests
}

// margins returns the margins of part j's boundaries for a block of at
// most w balls. Any margins give the chain's law (a block ends before a
// boundary passes its margin); they only set the speed. A margin of w,
// what the block can add at most, never stops a block early but makes
// every boundary's margin count against the sure sets, so that with L
// levels a candidate is unsure with chance L·w/size. A boundary grows by
// the balls that land on the level below it, about w times that level's
// share, so the margin is that plus three standard deviations and 2: a
// block then rarely ends at a margin, and the margins add up to about w
// per part, not L·w. The shares are the last block's categories'
// chances (they move slowly); the first block of a run uses w.
func (c *levelsChain) margins(j int, w uint64, marg []uint64) []uint64 {
	p := &c.parts[j]
	cats := c.blocks.cats // in order of part and level
	known := len(cats) > 0
	marg = marg[:0]
	for l := p.lo; l <= p.hi; l++ {
		m := w
		if known {
			for len(cats) > 0 && (cats[0].j < j || cats[0].j == j && cats[0].l < l) {
				cats = cats[1:]
			}
			var e float64
			if len(cats) > 0 && cats[0].j == j && cats[0].l == l {
				e = float64(w) * cats[0].p
			}
			m = min(w, uint64(e+3*math.Sqrt(e)+2))
			if c.cutOften {
				m = uint64(e / 2)
			}
		}
		marg = append(marg, m)
	}
	return marg
}

// threshold returns how many balls of category ct take its boundary past
// its margin.
func (c *levelsChain) threshold(ct category) uint64 {
	return c.blocks.marg[ct.j][ct.l-c.parts[ct.j].lo] + 1
}

// overMargin reports whether the counts x of the block's categories take
// any boundary past its margin.
func (c *levelsChain) overMargin(x []uint64) bool {
	for i, ct := range c.blocks.cats {
		if x[i] >= c.threshold(ct) {
			return true
		}
	}
	return false
}

// untilMargin cuts the block's counts x (whose balls came in a uniformly
// random order, the sure balls being independent and alike) down to the
// first balls in that order up to and including the one that takes a
// boundary past its margin, leaves those counts in x and returns how many
// balls they are. A prefix up to a stopping time of an independent
// sequence has the law of the sequence stopped there, which is the
// chain's law for this block.
//
// It draws the order from the end: the last of the balls left is any of
// them alike, so it takes one away at random until no category is at its
// threshold, then puts the last one taken back (it is the ball that took
// its boundary past the margin). A block passes a margin by a ball or two
// when it does, so this takes a few draws, where drawing the order from
// the start took as many draws as the block has balls (10^5 at 2^36
// bins).
func (c *levelsChain) untilMargin(g *stream, x []uint64) uint64 {
	var total uint64
	for i := range x {
		total += x[i]
	}
	for {
		r := g.below(total)
		i := 0
		for r >= x[i] {
			r -= x[i]
			i++
		}
		x[i]--
		total--
		if !c.overMargin(x) {
			x[i]++
			return total + 1
		}
	}
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
// O(levels), where deciding each pair of levels with Choose2 would take
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
	if cap(c.blocks.acc) < need {
		c.blocks.acc = make([]float64, need)
	}
	all := c.blocks.acc[:need]
	acc := all[:n0+n1]
	a, b := all[n0+n1:2*n0+n1], all[2*n0+n1:2*(n0+n1)]
	sufA, sufB := all[2*(n0+n1):3*n0+2*n1+1], all[3*n0+2*n1+1:]
	suffixShares(sets[0], sure[0], a, sufA)
	if c.partOf[0] == c.partOf[1] {
		b, sufB = a, sufA // one part: the same sure sets
	} else {
		suffixShares(sets[1], sure[1], b, sufB)
	}
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

// multinomial throws n sure balls into the categories by sequential
// binomials and returns their counts, by category (in c.blocks.x).
func (c *levelsChain) multinomial(g *stream, n uint64, cats []category) []uint64 {
	x := c.blocks.x[:0]
	rest := 0.0
	for _, ct := range cats {
		rest += ct.p
		x = append(x, 0)
	}
	c.blocks.x = x
	for i, ct := range cats {
		if n == 0 {
			break
		}
		if i == len(cats)-1 {
			x[i] = n
		} else {
			x[i] = g.binomial(n, min(ct.p/rest, 1))
			rest -= ct.p
		}
		n -= x[i]
	}
	return x
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
