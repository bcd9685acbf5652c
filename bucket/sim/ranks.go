package sim

import "math/bits"

// A rank source fills, for a batch of balls, each candidate's uniform rank
// within its part and a word of coin bits. Drawing a batch ahead of the
// chain keeps the generator's multiplies off the chain's critical path.
//
// Two ways, both exact:
//   - split: when every part has the same power-of-two size 2^k and one
//     64-bit word holds all d ranks and the coin bits (d·k + coin bits ≤ 64),
//     the ranks and the coin are disjoint bits of one word: disjoint bits
//     of a uniform word are independent uniforms. With two parts
//     ([splitParts]) rank 0 is the low k bits of the high 32-bit half,
//     rank 1 the low k bits of the word and the coin bit 63; with one part
//     and d = 2 ([split2]) rank j is the top k bits of 32-bit half j;
//     otherwise rank j is bits [64-(j+1)k, 64-jk) and the coin the bits
//     below. This covers every size of the published sweep.
//   - exact: otherwise each rank is its own word reduced by Lemire's
//     multiply-shift with rejection ([stream.below]), and the coin comes
//     from its own word.
type rankSource struct {
	d     int
	sizes [8]uint64
	split bool
	k     uint // log2 of the common part size, when split
	// coinBits is how many top bits of the coin word the rule reads: 0
	// (GoLeft, OneChoice), 1 (two candidates) or 32 (more, see
	// bucket.Placement.Choose).
	coinBits uint
	spare    uint64 // exact mode, d = 2: coin bits left over from one word
	left     uint
	// halves: two parts of 2^k bins with 2k + coinBits ≤ 32, so a ball's
	// ranks and coin fit in 32 bits and one word serves two balls, its
	// high half first (see splitHalf). pending holds the low half of the
	// last word drawn when its ball is still to come (hasPending): a throw
	// may end, or hand over to another loop, between the two balls.
	halves     bool
	hasPending bool
	pending    uint32
	// maxOf: all candidates share one part, and the chain only needs the
	// largest of the d ranks (see levelsChain), so fill writes one rank per
	// ball.
	maxOf bool
}

func newRankSource(sizes []uint64, coinBits uint) rankSource {
	rs := rankSource{d: len(sizes), coinBits: coinBits}
	copy(rs.sizes[:], sizes)
	s := sizes[0]
	same := true
	for _, x := range sizes {
		same = same && x == s
	}
	if same && s&(s-1) == 0 && s > 1 {
		k := uint(bits.TrailingZeros64(s))
		if uint(len(sizes))*k+coinBits <= 64 {
			rs.split, rs.k = true, k
		}
	}
	return rs
}

// fill writes the ranks of len(c) balls, candidate j's in r[j], and their
// coins in c. Under maxOf it writes one rank per ball, the largest, in r[0].
func (rs *rankSource) fill(g *stream, r *[8][levelsBatch]uint64, c []uint64) {
	if rs.maxOf {
		rs.fillMax(g, r[0][:len(c)])
		return
	}
	d := rs.d
	if !rs.split {
		rs.fillExact(g, r, c)
		return
	}
	// Shift counts masked to 63 so the compiler emits plain shifts; k is
	// at most 32 here and never 0.
	k := rs.k & 63
	sh := (64 - rs.k) & 63
	dk := (uint(d) * rs.k) & 63
	s := g.s
	switch {
	case rs.halves:
		r0, r1 := r[0][:len(c)], r[1][:len(c)]
		mask := rs.sizes[0] - 1
		for i := range c {
			var h uint32
			if rs.hasPending {
				h, rs.hasPending = rs.pending, false
			} else {
				s += golden
				u := mix(s)
				h, rs.pending, rs.hasPending = uint32(u>>32), uint32(u), true
			}
			r0[i], r1[i], c[i] = splitHalf(h, mask)
		}
	case d == 2:
		r0, r1 := r[0][:len(c)], r[1][:len(c)]
		mask := rs.sizes[0] - 1
		for i := range c {
			s += golden
			r0[i], r1[i], c[i] = splitParts(mix(s), mask)
		}
	default:
		for i := range c {
			s += golden
			u := mix(s)
			for j := range d {
				r[j][i] = (u << ((uint(j) * k) & 63)) >> sh
			}
			c[i] = u << dk
		}
	}
	g.s = s
}

func (rs *rankSource) fillExact(g *stream, r *[8][levelsBatch]uint64, c []uint64) {
	d := rs.d
	for i := range c {
		for j := range d {
			r[j][i] = g.below(rs.sizes[j])
		}
		switch {
		case rs.coinBits == 0:
			c[i] = 0
		case rs.coinBits == 1:
			if rs.left == 0 {
				rs.spare, rs.left = g.next(), 64
			}
			c[i] = rs.spare
			rs.spare <<= 1
			rs.left--
		default:
			c[i] = g.next()
		}
	}
}

// fillMax writes the largest of each ball's d ranks.
func (rs *rankSource) fillMax(g *stream, r []uint64) {
	d := rs.d
	if rs.split {
		k := rs.k & 63
		sh := (64 - rs.k) & 63
		s := g.s
		switch d {
		case 1:
			for i := range r {
				s += golden
				r[i] = mix(s) >> sh
			}
		case 2:
			size := rs.sizes[0]
			for i := range r {
				s += golden
				r0, r1, _ := split2(mix(s), size)
				r[i] = maxRank(r0, r1)
			}
		default:
			for i := range r {
				s += golden
				u := mix(s)
				x := u >> sh
				for j := 1; j < d; j++ {
					x = max(x, (u<<((uint(j)*k)&63))>>sh)
				}
				r[i] = x
			}
		}
		g.s = s
		return
	}
	n := rs.sizes[0]
	for i := range r {
		x := g.below(n)
		for j := 1; j < d; j++ {
			x = max(x, g.below(n))
		}
		r[i] = x
	}
}

// splitParts splits a uniform word u into the ranks of two candidates in
// two parts of 2^k bins each, mask = 2^k - 1, k ≤ 31 (32 without a coin),
// and a coin word: rank 0 is bits [32, 32+k), rank 1 bits [0, k), and the
// coin's top bit, the one Choose2 reads, is bit 63, which neither rank
// reads. A shift and two masks: the sorted loop of the two-part rules
// (sortedBins.fused2) spends a few nanoseconds per ball, and split2's two
// multiplies were a sizeable part of them.
func splitParts(u, mask uint64) (r0, r1, coin uint64) {
	return u >> 32 & mask, u & mask, u
}

// splitHalf splits a uniform 32-bit half word h into the ranks of two
// candidates in two parts of 2^k bins each, mask = 2^k - 1, k ≤ 15 (16
// without a coin), and a coin word: rank 0 is bits [16, 16+k) of h, rank 1
// bits [0, k), and the coin's top bit is bit 31 of h. At sizes up to 2^16
// bins (2^17 under GoLeft) the two-part rules need no more than 32 random
// bits a ball, and one multiply of the generator then serves two balls.
func splitHalf(h uint32, mask uint64) (r0, r1, coin uint64) {
	return uint64(h>>16) & mask, uint64(h) & mask, uint64(h) << 32
}

// split2 splits a uniform word u into the ranks of two candidates in parts
// of size = 2^k bins, k ≤ 31 (32 without a coin), and a coin word: rank j
// is the top k bits of 32-bit half j, computed as half·size >> 32 (exact
// for a power of two, and with constant shifts, which cost less than
// shifts by k on amd64), and the coin's top bit is bit 32 of u, which
// neither rank reads.
func split2(u, size uint64) (r0, r1, coin uint64) {
	return (u >> 32) * size >> 32, uint64(uint32(u)) * size >> 32, u << 31
}

// maxRank is max(a, b) for a, b < 2^63 without a branch: the compiler
// compiles the max builtin to a conditional move in some loops and to a
// branch in others, and which of two random ranks is larger is a coin flip
// to a branch predictor.
func maxRank(a, b uint64) uint64 {
	d := a - b // negative as an int64 exactly when a < b, both being below 2^63
	return a - d&uint64(int64(d)>>63)
}
