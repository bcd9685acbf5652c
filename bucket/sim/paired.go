package sim

import (
	"context"

	"github.com/twochoice/twochoice/bucket"
)

// Paired runs: two runs of a small simulation advanced in one loop.
//
// At small sizes a run spends its time in sorted mode's fused loops
// (sorted.go), where each ball waits on the one before it: more often than
// not it raises the same counter, so it reads what the last ball stored.
// Two runs share no state, so a loop that places a word of one run and
// then a word of the other (oneLoop2, max2Loop2, halvesLoop2) gives the
// processor two such chains to overlap. Each run still draws the same
// words and makes the same decisions as alone: throwPair(a, b, m) leaves a
// and b as a.throw(m) and b.throw(m) would, and so pairing changes no
// result, only the time: at 2^12 bins a ball costs 15 to 33% less paired
// than alone under every rule (BenchmarkLevels; halves 3.41 against 4.01
// ns, one choice 2.10 against 3.13).

// pairPays reports whether runs of c go faster two at a time: the levels
// engine, with chains that start in one of sorted mode's fused loops, and
// at most pairMaxBins bins.
func pairPays(c Config) bool {
	if c.Engine != Levels || c.Bins > pairMaxBins {
		return false
	}
	ch := newLevelsChain(c.Rule, c.D, c.Bins)
	return ch.fusedLoop() != noLoop && ch.sortedFits()
}

// pairMaxBins is the most bins at which runs go in pairs. Two chains'
// sorted arrays take twice the bytes of one, and once they pass the core's
// L1 data cache the paired loops are the slower: at 2^15 to 2^17 bins one
// choice and d-choice take 3.5–3.6 ns a ball paired against 2.5–2.9 alone,
// where at 2^12 to 2^14 pairing saves 10 to 30% (BenchmarkLevels). With
// 2^14 bins the pair takes 32 KiB, inside an L1 of 48 KiB.
const pairMaxBins = 1 << 14

// newChainPair returns two chains for rule, d and n whose sorted arrays
// sit in one buffer, b's 2·sortedMax bytes after a's, where the paired
// loops find them.
func newChainPair(rule bucket.Placement, d int, n uint64) [2]*levelsChain {
	a, b := newLevelsChain(rule, d, n), newLevelsChain(rule, d, n)
	buf := make([]uint8, 4*sortedMax)
	// enterSorted keeps a slice whose capacity suffices: a's reaches over
	// b's, so that throwPair can hand a paired loop both.
	a.sorted.bins, b.sorted.bins = buf[:0], buf[2*sortedMax:2*sortedMax]
	return [2]*levelsChain{a, b}
}

// pairsWith reports whether chains c and o can go through a paired loop
// now: chains of the same rule, d and n, both in sorted mode's fused
// loops with no half word pending, and o's sorted array where the loops
// look for it, 2·sortedMax bytes after c's (newChainPair). The pair loop
// has no paired twin: it takes parts larger than pairMaxBins.
func (c *levelsChain) pairsWith(o *levelsChain) bool {
	l := c.fusedLoop()
	return c.rule == o.rule && c.d == o.d && c.n == o.n && (l == loopOne || l == loopMax2 || l == loopHalves) &&
		!c.src.hasPending && !o.src.hasPending && c.sortedFits() && o.sortedFits() &&
		cap(c.sorted.bins) >= 4*sortedMax && cap(o.sorted.bins) > 0 &&
		&c.sorted.bins[:4*sortedMax][2*sortedMax] == &o.sorted.bins[:1][0]
}

// throwPair places m balls in chain a, drawn from ga, and m in chain b,
// drawn from gb, leaving both as a.throw(m, ga) and b.throw(m, gb) would.
// While both can (pairsWith), their words go through the paired loop of
// their fused loop, which places them as the fused loop would; then each
// chain's throw places its rest: the balls from a stop at 255 on (a
// paired loop stops at the ball its fused loop would), and the last ball
// of the halves loop when m is odd.
func throwPair(a, b *levelsChain, m uint64, ga, gb *stream) {
	ma, mb := m, m
	if a.pairsWith(b) {
		for _, c := range [2]*levelsChain{a, b} {
			if !c.sorted.on {
				c.enterSorted() // keeps the arrays: their capacity suffices
			}
		}
		bins := (*[4 * sortedMax]uint8)(a.sorted.bins[:4*sortedMax])
		na, nb := a.sorted.next[:], b.sorted.next[:]
		size := a.src.sizes[0]
		perWord := uint64(1)
		var xa, xb uint64
		var sa, sb int
		switch a.fusedLoop() {
		case loopOne:
			xa, xb, sa, sb = oneLoop2(bins, (*[256]uint32)(na), (*[256]uint32)(nb), ga.s, gb.s, m, a.src.k)
		case loopMax2:
			xa, xb, sa, sb = max2Loop2(bins, (*[256]uint32)(na), (*[256]uint32)(nb), ga.s, gb.s, m, size)
		case loopHalves:
			perWord = 2
			xa, xb, sa, sb = halvesLoop2(bins, (*[512]uint32)(na), (*[512]uint32)(nb), a.pairs, ga.s, gb.s, m/2, size-1)
		}
		ma -= a.pairedTo(ga, xa, sa, perWord)
		mb -= b.pairedTo(gb, xb, sb, perWord)
	}
	a.throw(ma, ga)
	b.throw(mb, gb)
}

// pairedTo moves chain c's stream g to x, where a paired loop left it with
// stop, and returns the balls placed, perWord a word; but a word of the
// halves loop stopped at its second ball has placed one, and leaves the
// other pending, for fusedHalves to try again (and stop at again), as
// after halvesLoop.
func (c *levelsChain) pairedTo(g *stream, x uint64, stop int, perWord uint64) uint64 {
	placed := perWord * drawn(g.s, x)
	g.s = x
	if stop == stopSecond {
		c.src.pending, c.src.hasPending = uint32(mix(x)), true
		placed--
	}
	return placed
}

// runPair runs runs r and r+1 of the resolved config c together through
// throwPair, calling placed with the number of balls placed in both every
// progressChunk balls a run; it adds their bins to sum and returns their
// highest loads, as run does for one.
func (w *runner) runPair(ctx context.Context, c Config, r int, sum *bucket.Histogram, placed func(uint64)) (max0, max1 int, err error) {
	a, b := w.pair[0], w.pair[1]
	if a == nil || !a.reset(c.Rule, c.D, c.Bins) || !b.reset(c.Rule, c.D, c.Bins) {
		w.pair = newChainPair(c.Rule, c.D, c.Bins)
		a, b = w.pair[0], w.pair[1]
	}
	a.noBlocks, b.noBlocks = c.BallByBall, c.BallByBall
	ga, gb := newStream(RunSeed(c.Seed, r)), newStream(RunSeed(c.Seed, r+1))
	for m := c.Balls; m > 0; {
		k := min(m, progressChunk)
		throwPair(a, b, k, &ga, &gb)
		m -= k
		placed(2 * k)
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
	}
	return a.addTo(sum), b.addTo(sum), nil
}
