package sim

import (
	"github.com/twochoice/twochoice/bucket"
)

// The levels engine simulates the exact Markov chain on load counts
// (docs/simulation.md). For a rule whose candidates are uniform within
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
// Speed. Small parts (up to 2^17 bins: sortedMax) keep
// their bins sorted by load in a byte array, so a candidate's load is one
// byte load (sorted.go); large parts go by blocks (blocks.go). In between
// the two, and with Config.BallByBall on large parts, balls go one by one on
// the counts: loads crowd into a few values (at m = n with two choices, 0 to
// 4), so the fast loops (fast1, fast2) read a window of the lowest levels of
// each part and count a candidate's load with two branch-free compares
// against a snapshot of the counts, taking a rarely taken branch only for
// ranks near a moving count or deep in the tail. Ranks are drawn a batch
// ahead ([rankSource]). A part whose loads spread wider than the window (one
// choice at a large load factor) goes through the general loop, which scans
// or bisects the full counts.

// levelPart is the chain's state for one part.
type levelPart struct {
	size    uint64   // bins in the part
	atLeast []uint64 // atLeast[k]: bins with load ≥ k; zero past hi
	lo, hi  int      // every bin holds ≥ lo balls; none holds more than hi
}

const (
	// window is the number of levels per part that the fast loop keeps
	// locally (a power of two: indices are masked, not bounds-checked).
	window = 16
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
	n      uint64
	cands  int // ranks per ball the chain reads: 1 with one part, else d
	parts  []levelPart
	partOf [8]int // part of candidate j
	src    rankSource
	r      [8][levelsBatch]uint64 // r[j][i]: rank of ball i's candidate j
	coins  [levelsBatch]uint64
	// slow turns sorted mode and the fast loops off, for tests: every
	// ball-by-ball loop must give the same counts from the same ranks.
	slow bool
	// noBlocks turns block mode off (see blocks.go), for tests; cutOften
	// gives blocks margins of half the growth expected, so that most
	// blocks end at a margin (untilMargin), also for tests.
	noBlocks bool
	cutOften bool
	// sorted is the state of sorted mode (sorted.go), which small parts
	// run in; noSorted turns it off, for tests.
	sorted   sortedBins
	noSorted bool
	pairs    *pairTable // the rule's decisions, with two parts
	blocks   blockScratch
	// tie0 is the share of coins with which candidate 0 takes a tie
	// between two candidates (1 under GoLeft, 1/2 under the coin rules),
	// from Choose2 (tieShare).
	tie0 float64
}

func newLevelsChain(rule bucket.Placement, d int, n uint64) *levelsChain {
	c := &levelsChain{rule: rule, d: d, n: n, tie0: tieShare(rule)}
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
	if d == 2 {
		c.pairs = pairTableOf(rule)
	}
	var coinBits uint
	switch {
	case rule == bucket.GoLeft:
	case d == 2:
		coinBits = 1
	default:
		coinBits = 32
	}
	c.src = newRankSource(sizes, coinBits)
	c.src.halves = d == 2 && c.src.split && 2*c.src.k+coinBits <= 32
	return c
}

// tieShare returns the share of the coin's values (its top bit, the only
// bit Choose2 reads) with which rule gives a tie between two candidates to
// candidate 0.
func tieShare(rule bucket.Placement) float64 {
	var won float64
	for coin := range uint64(2) {
		if rule.Choose2(0, 0, coin<<63) == 0 {
			won += 0.5
		}
	}
	return won
}

// reset makes c a new chain for rule, d and n bins, keeping its memory, if
// it was made for the same; it reports whether it was.
func (c *levelsChain) reset(rule bucket.Placement, d int, n uint64) bool {
	if c.rule != rule || c.d != d || c.n != n {
		return false
	}
	for j := range c.parts {
		p := &c.parts[j]
		clear(p.atLeast)
		p.atLeast[0] = p.size
		p.lo, p.hi = 0, 0
	}
	c.src.spare, c.src.left, c.src.hasPending = 0, 0, false
	c.sorted.on, c.sorted.off = false, false
	c.blocks.cats = c.blocks.cats[:0]
	return true
}

// throw places m balls: in sorted mode on small parts (sorted.go), by
// blocks while blocks pay on large ones (blocks.go), ball by ball on the
// counts otherwise.
func (c *levelsChain) throw(m uint64, g *stream) {
	d := c.cands
	for m > 0 {
		if c.sortedFits() {
			m -= c.throwSorted(m, g)
			continue
		}
		if c.blockWidth() > 0 {
			m -= c.throwBlocks(m, g)
			continue
		}
		b := int(min(m, levelsBatch))
		m -= uint64(b)
		coins := c.coins[:b]
		c.src.fill(g, &c.r, coins)
		i := 0
		switch {
		case c.slow:
		case d == 1:
			i = c.fast1(c.r[0][:b])
		case d == 2:
			i = c.fast2(c.r[0][:b], c.r[1][:b], coins)
		}
		c.general(i, coins)
	}
	if c.sorted.on {
		c.syncSorted()
	}
}

// general places balls from..len(coins)-1 of the batch one by one on the
// full counts, for any d and any spread of loads.
func (c *levelsChain) general(from int, coins []uint64) {
	d := c.cands
	var loads [8]uint32
	for i := from; i < len(coins); i++ {
		coin := coins[i]
		for j := range d {
			loads[j] = uint32(c.parts[c.partOf[j]].level(c.r[j][i]))
		}
		k := 0
		if d > 1 {
			k = c.rule.Choose(loads[:d], coin)
		}
		c.parts[c.partOf[k]].add(int(loads[k]))
	}
}

// The fast loops read a part's counts through a window of its lowest
// levels, t[k] = atLeast[lo+k], and would be bound by latency if each ball
// compared its ranks with counts the previous ball had just changed: every
// ball would wait for the last one's store. So they compare with a snapshot
// of the counts taken every few balls, which the balls in between do not
// change. Between snapshots a count t[k] grows by at most the number of
// balls since, step, so a rank r below snapshot[k] is below t[k] too, and a
// rank at or above snapshot[k] + step is at or above t[k]: only a rank in
// [snapshot[k], snapshot[k] + step) can be counted wrongly. A rank there, or
// one deeper than the two levels the loop compares (load ≥ lo+3), takes a
// branch, rarely taken, to count its level exactly from the current counts.

// snapshot is the part of a window a fast loop compares ranks with.
type snapshot struct {
	t1, t2 uint64    // counts of relative levels 1 and 2
	zone   [4]uint64 // zone[l+1]: ranks below it need an exact count when the snapshot says l
}

func (sn *snapshot) take(t *[window]uint64, step uint64) {
	sn.t1, sn.t2 = t[1], t[2]
	sn.zone[1], sn.zone[2], sn.zone[3] = t[1]+step, t[2]+step, t[3]+step
}

// unsure marks a level the snapshot cannot vouch for.
const unsure = 1 << 7

// levels writes the relative level of each rank in x to l, from the
// snapshot, or unsure where the rank lies in an unsure zone or deeper than
// level 2. It has no branch, and the balls it looks at do not depend on
// each other, so the processor overlaps them.
func (sn *snapshot) levels(x []uint64, l []uint8) {
	t1, t2 := sn.t1, sn.t2
	l = l[:len(x)]
	for i, r := range x {
		// r and the counts are below 2^63, so the sign bit of r - t is r < t.
		v := (r-t1)>>63 + (r-t2)>>63
		v |= (r - sn.zone[v+1]) >> 63 << 7
		l[i] = uint8(v)
	}
}

// exactLevel is the relative level of rank x from the current counts.
func exactLevel(t *[window]uint64, x uint64) int {
	l := 0
	for _, c := range t[1:] {
		l += int((x - c) >> 63)
	}
	return l
}

// snapStep is the number of balls between snapshots for a part of size
// bins: long enough to pay for the snapshot, short enough that ranks rarely
// fall in the unsure zones (with probability about 2·step/size).
func snapStep(size uint64) int { return int(min(max(size>>10, 1), 32)) }

// windowOf returns part p's window, or nil if its loads spread too wide
// for one (the general loop then runs).
func windowOf(p *levelPart) *[window]uint64 {
	if p.hi-p.lo > window-3 {
		return nil
	}
	return (*[window]uint64)(p.atLeast[p.lo : p.lo+window])
}

// fast1 places balls with one rank each (one part). It returns how many it
// placed: all, unless a load left the window.
func (c *levelsChain) fast1(r []uint64) int {
	p := &c.parts[0]
	t := windowOf(p)
	if t == nil {
		return 0
	}
	step := snapStep(p.size)
	var sn snapshot
	var lv [levelsBatch]uint8
	for i := 0; i < len(r); i += step {
		end := min(i+step, len(r))
		sn.take(t, uint64(step))
		sn.levels(r[i:end], lv[i:end])
		for j := i; j < end; j++ {
			l := int(lv[j])
			if l&unsure != 0 {
				l = exactLevel(t, r[j])
			}
			t[(l+1)&(window-1)]++
			if l+1 >= window-2 {
				c.unwindow(p, t)
				return j + 1
			}
		}
	}
	c.unwindow(p, t)
	return len(r)
}

// fast2 places balls with one rank in each of two parts (Halves and GoLeft
// with d = 2), the loop those rules spend their time in. Levels come from
// the snapshots in two branch-free passes, then a third pass decides and
// counts. The winner's count is picked by index, not by a branch on
// Choose2's answer: which candidate wins is a coin flip to a branch
// predictor, and a mispredict costs more than the rest of the ball.
func (c *levelsChain) fast2(r0, r1, coins []uint64) int {
	p0, p1 := &c.parts[0], &c.parts[1]
	t0, t1 := windowOf(p0), windowOf(p1)
	if t0 == nil || t1 == nil {
		return 0
	}
	ts := [2]*[window]uint64{t0, t1}
	step := snapStep(min(p0.size, p1.size))
	lo0, lo1 := uint32(p0.lo), uint32(p1.lo)
	rule := c.rule
	var s0, s1 snapshot
	var la, lb [levelsBatch]uint8
	r1 = r1[:len(r0)]
	coins = coins[:len(r0)]
	for i := 0; i < len(r0); i += step {
		end := min(i+step, len(r0))
		s0.take(t0, uint64(step))
		s1.take(t1, uint64(step))
		s0.levels(r0[i:end], la[i:end])
		s1.levels(r1[i:end], lb[i:end])
		for j := i; j < end; j++ {
			a, b := int(la[j]), int(lb[j])
			if (a|b)&unsure != 0 {
				if a&unsure != 0 {
					a = exactLevel(t0, r0[j])
				}
				if b&unsure != 0 {
					b = exactLevel(t1, r1[j])
				}
			}
			k := rule.Choose2(lo0+uint32(a), lo1+uint32(b), coins[j]) & 1
			// The relative level raised, chosen with a mask.
			e := (a ^ ((a ^ b) & -k)) + 1
			ts[k][e&(window-1)]++
			if e >= window-2 {
				c.unwindow(p0, t0)
				c.unwindow(p1, t1)
				return j + 1
			}
		}
	}
	c.unwindow(p0, t0)
	c.unwindow(p1, t1)
	return len(r0)
}

// unwindow restores a part's invariants after a fast loop changed its
// window in place.
func (c *levelsChain) unwindow(p *levelPart, t *[window]uint64) {
	for k := window - 1; k > 0; k-- {
		if t[k] != 0 {
			p.hi = max(p.hi, p.lo+k)
			break
		}
	}
	p.tidy()
}

// addTo adds the chain's bins, counted by load per part, to h, and
// returns the highest load. A run's counts go straight into its worker's
// sum (Run): a histogram of its own for every run would cost, with its
// garbage, about 3% of a run's time at 2^12 bins (perf).
func (c *levelsChain) addTo(h *bucket.Histogram) (maxLoad int) {
	for j := range c.parts {
		p := &c.parts[j]
		p.histogramInto(h, j)
		for l := p.hi; l > maxLoad; l-- {
			if p.atLeast[l] != 0 {
				maxLoad = l
				break
			}
		}
	}
	return maxLoad
}
