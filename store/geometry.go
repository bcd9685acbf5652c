package store

import (
	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
)

// geometry is what a table of either type knows of where keys go: its
// size, its rule and the candidate buckets of a hash, and the choice among
// them. A map's table and a cache's embed it, so candidates are derived
// and chosen in one place.
type geometry struct {
	n       uint64 // buckets
	gen     hashfn.Generator
	rule    bucket.Placement
	d       int
	size    int    // the slots of a bucket in use: BucketSize, or a cache's (cacheSize)
	capMask uint64 // the high bits of the first size control bytes

	// For the two-choice fast path (cand2): the scheme, and the first
	// bucket and size of each part (Parts), or n (Independent, Double).
	scheme hashfn.Scheme
	lo     [2]uint64
	span   [2]uint64
	pow2   bool
}

// newGeometry returns the geometry of a table of n buckets under o's rule,
// which must accept n (sizes come from sizeAtLeast or cacheSize, which
// only return sizes the rule accepts).
func newGeometry(o *config, n uint64) geometry {
	gen, err := o.Placement.Generator(n, o.Choices)
	if err != nil {
		panic("store: " + err.Error()) // a bug in this package: see above
	}
	g := geometry{
		n:       n,
		gen:     gen,
		rule:    o.Placement,
		d:       o.Choices,
		size:    o.BucketSize,
		capMask: capMaskOf(o.BucketSize),
		scheme:  gen.Scheme(),
		span:    [2]uint64{n, n},
		pow2:    n&(n-1) == 0,
	}
	if g.scheme == hashfn.Parts && g.d == 2 {
		for k := range 2 {
			lo, hi := gen.PartBounds(k)
			g.lo[k], g.span[k] = lo, hi-lo
		}
	}
	return g
}

// cand2 returns the two candidates of hash h, as gen.Fill would (a test
// checks it), without Fill's loop and switch: the fast path for d = 2.
func (g *geometry) cand2(h uint64) (uint64, uint64) {
	if g.scheme == hashfn.Double {
		return g.cand2Double(h)
	}
	return g.cand2Words(h)
}

// cand2Words is cand2 for the Independent and Parts schemes: each word of
// h reduced into its part (hashfn.Reduce, written out so that the function
// stays within the inlining budget). The hot paths call it directly, so
// that they pay no call for their candidates.
func (g *geometry) cand2Words(h uint64) (uint64, uint64) {
	return g.lo[0] + uint64(uint32(h))*g.span[0]>>32, g.lo[1] + (h>>32)*g.span[1]>>32
}

// cand2Double is cand2 for the Double scheme: f + k·g mod n.
func (g *geometry) cand2Double(h uint64) (uint64, uint64) {
	w0, w1 := uint32(h), uint32(h>>32)
	n := g.span[0]
	c := hashfn.Reduce(w0, n)
	var step uint64
	if g.pow2 {
		step = 2*hashfn.Reduce(w1, n/2) + 1
	} else {
		step = 1 + hashfn.Reduce(w1, n-1)
	}
	c1 := c + step
	if c1 >= n {
		c1 -= n
	}
	return c, c1
}

// candidates fills c with the key's candidates and returns them.
func (g *geometry) candidates(h uint64, c *[hashfn.MaxChoices]uint64) []uint64 {
	g.gen.Fill(h, c[:])
	return c[:g.d]
}

// cands is candidates through the d = 2 fast path when it applies.
func (g *geometry) cands(h uint64, c *[hashfn.MaxChoices]uint64) []uint64 {
	if g.d == 2 {
		c[0], c[1] = g.cand2(h)
		return c[:2]
	}
	return g.candidates(h, c)
}

// choose returns the index of the candidate the rule picks for a key of
// hash h, given the candidates' loads.
func (g *geometry) choose(loads []uint32, h uint64) int {
	switch g.d {
	case 1:
		return 0
	case 2:
		// Choose2 reads the coin's top bit: bit 7 of the hash, beside
		// the tag's bits 0–6, so placement follows from the seed.
		return g.rule.Choose2(loads[0], loads[1], h<<56)
	}
	// Choose reads 32 coin bits: they come from an extension word of the
	// hash that no candidate uses (candidates use words 1 to 3).
	return g.rule.Choose(loads[:g.d], hashfn.Extend(h, coinExtension))
}

// coinExtension is the Extend word whose top half breaks ties among more
// than two candidates; candidates 2 to 7 use extension words 1 to 3.
const coinExtension = hashfn.MaxChoices/2 + 1
