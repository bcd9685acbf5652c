package sim

import (
	"sync"

	"github.com/twochoice/twochoice/bucket"
)

// Sorted mode: the levels chain on small parts, with each part's bins kept
// in an array sorted by load.
//
// Ranks order a part's bins from the fullest down (levels.go), and which
// bin holds which load does not matter to the chain, only how many bins
// hold each. So a part may keep one byte per bin, sorted by load in
// descending order, and the load of the bin of rank r is then simply
// sorted[r]: one byte load per candidate, where the counts path compares
// the rank with the counts of the occupied levels. sorted[r] is exactly the
// load the counts give (the largest l with atLeast[l] > r), so this is the
// same chain, drawn from the same ranks and coins and decided by the same
// bucket.Placement.Choose2/Choose: the counts come out the same bit for
// bit, which a test checks.
//
// Raising a bin from load l to l+1 keeps the array sorted in O(1): the bins
// holding l sit at positions [atLeast[l+1], atLeast[l]), so raise the
// first of them, sorted[atLeast[l+1]] = l+1, and count it,
// atLeast[l+1]++. A ball costs its random word, a byte load per candidate,
// a counter load and two stores, whatever the spread of the loads.
//
// Only parts of at most sortedMax bins go this way: the array then stays in
// the core's cache, and the memory stays bounded whatever n is. Larger
// parts go by blocks (blocks.go), cheaper there per ball. Loads are bytes:
// a ball that would raise a bin past 255 ends sorted mode for the rest of
// the run, and the counts path, which takes any load, goes on from the
// counts.

// sortedMax is the most bins a part may have for sorted mode, where block
// mode (blocks.go) takes larger parts: one byte a bin, so at most 128 KiB
// a part and 1 MiB for 8 parts, whatever n is. Measured at m = n
// (BenchmarkLevels): sorted mode is up to 3× faster than the ball-by-ball
// loops on small parts but slows as its array leaves the L1 and L2
// caches, while a block's cost per ball falls as parts grow. Blocks beat
// it from parts of 2^18 bins on (dchoice at 2^18 bins: 1.7 ns a ball by
// blocks against 3.5 sorted) and tie with it at 2^17 under the one-part
// rules. Under the two-part rules sorted mode's assembly loops stay ahead
// at parts of 2^17 (halves at 2^18 bins: 4.2 ns a ball sorted against 5.5
// by blocks; go-left 4.2 against 4.3).
const sortedMax = 1 << 17

// sortedBins is the sorted mode's state for all the parts of a chain.
type sortedBins struct {
	// bins holds every part's bins, part j at [base[j], base[j]+size_j),
	// sorted by load, fullest first. With two parts, part 1 starts at
	// sortedMax whatever the size (bins has 2·sortedMax bytes), so that
	// the loops (sorted_loops.go) reach it with a constant offset and,
	// bins being a fixed size, masked indices need no bounds checks.
	bins []uint8
	// next[j<<8|l], l ≥ 1, is base[j] + atLeast_j[l]: the position of part
	// j's fullest bin with load < l, the one a ball raising a bin to l
	// raises. Indexed by part and byte, so that pairLoop finds the
	// counter from one table entry and a masked index needs no bounds
	// check.
	next [8 << 8]uint32
	base [8]uint32
	// on: bins and next hold the chain's state; the parts' counts are
	// brought up to date (syncSorted) at the end of every throw.
	on bool
	// off: a load reached 255 in this run, and the next ball to raise it
	// would not fit in a byte.
	off bool
}

// sortedFits reports whether the chain can run in sorted mode.
func (c *levelsChain) sortedFits() bool {
	if c.sorted.off || c.slow || c.noSorted {
		return false
	}
	for j := range c.parts {
		if p := &c.parts[j]; p.size > sortedMax || !c.sorted.on && p.hi > 254 {
			return false
		}
	}
	return true
}

// enterSorted builds the sorted arrays from the parts' counts.
func (c *levelsChain) enterSorted() {
	s := &c.sorted
	total := uint64(0)
	for j := range c.parts {
		total += c.parts[j].size
	}
	if len(c.parts) == 2 {
		total = 2 * sortedMax
	}
	if uint64(cap(s.bins)) < total {
		s.bins = make([]uint8, total)
	}
	s.bins = s.bins[:total]
	base := uint32(0)
	for j := range c.parts {
		p := &c.parts[j]
		s.base[j] = base
		next := s.next[j<<8 : (j+1)<<8]
		for l := range next {
			next[l] = base
		}
		// The counts fall with the load, to 0 past the highest, so the
		// loop stops there: at the start of a run, after next[0]. (The
		// loop that read atLeast for all 256 levels made enterSorted 3.4%
		// of a run's time at 2^12 bins, and 1.75% after; perf.)
		atLeast := p.atLeast[:min(len(p.atLeast), len(next))]
		for l, a := range atLeast {
			if a == 0 {
				break
			}
			next[l] += uint32(a)
		}
		// The bins of load l hold ranks [atLeast[l+1], atLeast[l]).
		part := s.bins[base : uint64(base)+p.size]
		for l := p.lo; l <= p.hi; l++ {
			seg := part[p.atLeast[l+1]:p.atLeast[l]]
			if l == 0 {
				clear(seg) // a new run: a memclr
				continue
			}
			for i := range seg {
				seg[i] = uint8(l)
			}
		}
		base += uint32(p.size)
		if len(c.parts) == 2 {
			base = sortedMax
		}
	}
	s.on = true
}

// syncSorted brings the parts' counts up to date from the sorted arrays.
func (c *levelsChain) syncSorted() {
	s := &c.sorted
	for j := range c.parts {
		p := &c.parts[j]
		next, base := s.next[j<<8:(j+1)<<8], s.base[j]
		hi := 0
		for l := 1; l < len(next) && next[l] != base; l++ {
			hi = l
		}
		if need := hi + 2*window; need > len(p.atLeast) {
			p.atLeast = append(p.atLeast, make([]uint64, need-len(p.atLeast))...)
		}
		for l := 1; l <= hi; l++ {
			p.atLeast[l] = uint64(next[l] - base)
		}
		p.hi = max(p.hi, hi)
		p.tidy()
	}
}

// leaveSorted ends sorted mode for the rest of the run.
func (c *levelsChain) leaveSorted() {
	c.syncSorted()
	c.sorted.on, c.sorted.off = false, true
}

// throwSorted places up to m balls in sorted mode and returns how many it
// placed: all, unless a load would pass 255, in which case it leaves
// sorted mode first.
//
// Under the split rank source with one or two candidates (powers of two:
// every size of a sweep) the loops draw each ball's word themselves
// (fused1, fusedMax2, fused2), so the processor overlaps the draws with
// the chain of counter updates; otherwise ranks come a batch at a time
// from the rank source. Both draw the same ranks from the same stream.
func (c *levelsChain) throwSorted(m uint64, g *stream) uint64 {
	if !c.sorted.on {
		c.enterSorted()
	}
	s := &c.sorted
	rs := &c.src
	var placed uint64
	switch c.fusedLoop() {
	case loopOne:
		placed = s.fused1(g, m, rs.k)
	case loopMax2:
		placed = s.fusedMax2(g, m, rs.sizes[0])
	case loopHalves:
		placed = s.fusedHalves(g, rs, m, c.pairs)
	case loopPair:
		placed = s.fused2(g, m, c.pairs, rs.sizes[0])
	default:
		for placed < m {
			b := int(min(m-placed, levelsBatch))
			coins := c.coins[:b]
			c.src.fill(g, &c.r, coins)
			i := c.placeSorted(coins)
			placed += uint64(i)
			if i < b {
				// The ball that would pass 255 and the rest of the batch
				// go on the counts.
				c.leaveSorted()
				c.general(i, coins)
				return placed + uint64(b-i)
			}
		}
		return placed
	}
	if placed < m {
		// The fused loops stop before the ball that would pass 255 and
		// put its word back (the stream is a Weyl sequence: one step
		// back is one subtraction), so the counts path draws it again.
		c.leaveSorted()
	}
	return placed
}

// The fused loops, which draw each ball's word themselves, one per shape
// of ball.
const (
	noLoop     = iota
	loopOne    // oneLoop: one candidate (OneChoice)
	loopMax2   // max2Loop: two candidates in one part (DChoice, d = 2)
	loopHalves // halvesLoop: one candidate in each of two parts, two balls a word
	loopPair   // pairLoop: the same, one ball a word (larger parts)
)

// fusedLoop returns the fused loop that throwSorted runs c's balls
// through, or noLoop when their ranks come from the rank source a batch at
// a time.
func (c *levelsChain) fusedLoop() int {
	rs := &c.src
	switch {
	case rs.split && c.cands == 1 && c.d == 1:
		return loopOne
	case rs.split && c.cands == 1 && c.d == 2:
		return loopMax2
	case rs.halves:
		return loopHalves
	case rs.split && c.cands == 2:
		return loopPair
	}
	return noLoop
}

// fused1 places up to m one-candidate balls (OneChoice) in part 0, the
// rank of a ball being the top k bits of its word, as the rank source
// draws it.
func (s *sortedBins) fused1(g *stream, m uint64, k uint) uint64 {
	x0 := g.s
	g.s = oneLoop(s.bins, (*[256]uint32)(s.next[:256]), x0, x0+m*golden, k)
	return drawn(x0, g.s)
}

// fusedMax2 places up to m two-candidate balls in one part (DChoice with
// d = 2): the larger of the two ranks is the less loaded candidate. The
// ranks are split2's, and since half·size >> 32 grows with the half, the
// larger rank is the larger half times size: one multiply, not two.
func (s *sortedBins) fusedMax2(g *stream, m uint64, size uint64) uint64 {
	x0 := g.s
	g.s = max2Loop(s.bins, (*[256]uint32)(s.next[:256]), x0, x0+m*golden, size)
	return drawn(x0, g.s)
}

// fused2 places up to m balls with one candidate in each of two parts of
// size bins (Halves and GoLeft with d = 2), deciding by the rule's
// [pairTable].
func (s *sortedBins) fused2(g *stream, m uint64, t *pairTable, size uint64) uint64 {
	x0 := g.s
	mask := (size - 1) & (sortedMax - 1) // size ≤ sortedMax: the mask is size - 1
	g.s = pairLoop((*[2 * sortedMax]uint8)(s.bins), (*[512]uint32)(s.next[:512]), t, x0, x0+m*golden, mask)
	return drawn(x0, g.s)
}

// fusedHalves is fused2 with one word for two balls, under the rank
// source's halves mode (parts of up to 2^15 bins, 2^16 under GoLeft): ball
// 2i reads the high half of word i, ball 2i+1 the low half (splitHalf),
// with a ball still to come from the last word drawn left in rs.pending.
// The generator's multiply, the loop's counting and its exit test are
// then paid once per two balls.
func (s *sortedBins) fusedHalves(g *stream, rs *rankSource, m uint64, t *pairTable) uint64 {
	mask := uint16(rs.sizes[0] - 1)
	var placed uint64
	if rs.hasPending && m > 0 {
		if !s.placeHalf(rs.pending, uint64(mask), t) {
			return 0
		}
		rs.hasPending = false
		placed++
	}
	x0 := g.s
	x, stop := halvesLoop((*[2 * sortedMax]uint8)(s.bins), (*[512]uint32)(s.next[:512]), t, x0, x0+(m-placed)/2*golden, uint64(mask))
	g.s = x
	placed += 2 * drawn(x0, x)
	switch {
	case stop == stopSecond:
		// The word's first ball is placed; the counts path takes the
		// second from the pending half.
		rs.pending, rs.hasPending = uint32(mix(x)), true
		return placed - 1
	case stop == stopFirst:
		return placed // the word is put back: the counts path draws it again
	case placed < m:
		// One ball left: the high half of a new word, the low half
		// pending for the next throw.
		u := g.next()
		if !s.placeHalf(uint32(u>>32), uint64(mask), t) {
			g.s -= golden
			return placed
		}
		rs.pending, rs.hasPending = uint32(u), true
		placed++
	}
	return placed
}

// How halvesLoop stopped: every word placed, or before the first or the second
// ball of a word, which would raise a bin past 255.
const (
	stopDone = iota
	stopFirst
	stopSecond
)

// placeHalf places the ball of half word h (splitHalf) in two parts of
// mask+1 bins; it reports false, placing nothing, if the ball would raise
// a bin past 255.
func (s *sortedBins) placeHalf(h uint32, mask uint64, t *pairTable) bool {
	r0, r1, coin := splitHalf(h, mask)
	a, b := s.bins[r0], s.bins[uint64(s.base[1])+r1]
	q := t[coin>>63][uint16(a)<<8|uint16(b)]
	if uint8(q) == 0 {
		return false
	}
	k := q & 511
	p := s.next[k]
	s.bins[p] = uint8(q)
	s.next[k] = p + 1
	return true
}

// A pairTable holds Choose2's answers for two candidates of loads a and b
// and both values of the coin's top bit c, the only bit of the coin
// Choose2 reads: t[c][a<<8 | b] = k<<8 | l+1, where k is the winning
// candidate and l its load, which is the index in sortedBins.next of the
// counter a ball raises (0 where l+1 would pass 255). pairLoop is bound
// by its instruction count, and one load from the table replaces Choose2's
// dozen instructions, the select of the winner's load and the index
// arithmetic around them. The decisions are still Choose2's, made once per
// pair of loads and coin (pairTableOf). The table takes 256 KiB; a run at
// m = n touches a few of its cache lines (loads 0 to 5).
type pairTable [2][1 << 16]uint16

// pairTables holds each rule's pairTable, made on first use: a table
// depends on the rule alone and is never written after, so every chain of
// every run shares it (making one calls Choose2 2^17 times).
var pairTables sync.Map // bucket.Placement → *pairTable

func pairTableOf(rule bucket.Placement) *pairTable {
	if t, ok := pairTables.Load(rule); ok {
		return t.(*pairTable)
	}
	t, _ := pairTables.LoadOrStore(rule, newPairTable(rule))
	return t.(*pairTable)
}

func newPairTable(rule bucket.Placement) *pairTable {
	t := new(pairTable)
	for c := range uint64(2) {
		for a := range uint32(256) {
			for b := range uint32(256) {
				k := rule.Choose2(a, b, c<<63)
				if l := [2]uint32{a, b}[k]; l < 255 {
					t[c][a<<8|b] = uint16(k<<8) | uint16(l+1)
				}
			}
		}
	}
	return t
}

// placeSorted places the balls of the current batch, drawn into c.r and
// coins, and returns how many it placed: all, unless a load would pass
// 255.
func (c *levelsChain) placeSorted(coins []uint64) int {
	s := &c.sorted
	b := len(coins)
	switch c.cands {
	case 1:
		return s.place1(c.r[0][:b])
	case 2:
		return s.place2(c.pairs, c.r[0][:b], c.r[1][:b], coins)
	}
	d := c.cands
	var loads [8]uint32
	for i, coin := range coins {
		for j := range d {
			loads[j] = uint32(s.bins[uint64(s.base[j])+c.r[j][i]])
		}
		k := c.rule.Choose(loads[:d], coin)
		e := uint8(loads[k]) + 1
		if e == 0 {
			return i
		}
		q := k<<8 | int(e)
		p := s.next[q]
		s.bins[p] = e
		s.next[q] = p + 1
	}
	return b
}

// place1 is fused1 and fusedMax2 for ranks drawn a batch at a time (one
// part: the rank is the largest of the ball's candidates').
func (s *sortedBins) place1(r []uint64) int {
	bins := s.bins
	next := (*[256]uint32)(s.next[:256])
	for i, x := range r {
		e := bins[x] + 1
		if e == 0 {
			return i
		}
		p := next[e]
		bins[p] = e
		next[e] = p + 1
	}
	return len(r)
}

// place2 is fused2 for ranks and coins drawn a batch at a time.
func (s *sortedBins) place2(t *pairTable, r0, r1, coins []uint64) int {
	bins := s.bins
	next := (*[512]uint32)(s.next[:512])
	base1 := uint64(s.base[1])
	r1 = r1[:len(r0)]
	coins = coins[:len(r0)]
	for i, x := range r0 {
		a, b := bins[x], bins[base1+r1[i]]
		q := t[coins[i]>>63][uint16(a)<<8|uint16(b)]
		if uint8(q) == 0 {
			return i
		}
		q &= 511
		p := next[q]
		bins[p] = uint8(q)
		next[q] = p + 1
	}
	return len(r0)
}
