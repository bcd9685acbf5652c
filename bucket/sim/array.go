package sim

import (
	"errors"
	"unsafe"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
)

// The array engine keeps every bin's load in a real array, one byte per bin
// (two or four when a load could pass 255), and places balls one by one. It
// runs every rule, DoubleHash included, and key-driven runs, whose
// candidates come from hashing real keys.
//
// At 2^28 bins and more the array is far larger than the caches, and a ball
// costs two cache misses: the loop is bound by memory, not by arithmetic.
// So it works in batches: it computes the candidates of the next batch and
// touches their bins (a load whose value is not needed yet, which starts the
// cache miss) before it places the current batch, whose bins are by then in
// cache. The decision and the store then wait on cache hits, not on memory.

// MaxArrayBins is the most bins the array engine takes.
const MaxArrayBins = 1 << 31

// errWrapped reports that a load passed the width of the array's counters;
// the run is replayed with wider counters (see runArray).
var errWrapped = errors.New("sim: load passed the counter width")

// arrayBatch is the number of balls whose candidates are computed and
// touched ahead of placing them (at most levelsBatch; a variable so that
// BenchmarkArrayBatch can try others).
var arrayBatch = 64

// counter is the type of one bin's load in the array.
type counter interface{ ~uint8 | ~uint16 | ~uint32 }

// candidates makes the candidates of a batch of balls: from the run's
// stream (uniform candidates, exactly) or from hashed keys.
type candidates struct {
	rule bucket.Placement
	d    int
	n    uint64
	gen  hashfn.Generator
	lo   [9]uint64 // part bounds
	// Uniform candidates of the rules with independent or per-part
	// candidates are ranks within the candidate's part plus the part's
	// first bin.
	ranks rankSource
	keys  *keyHasher
	hash  []uint64
	spare uint64 // coin bits
	left  uint
}

func newCandidates(rule bucket.Placement, d int, n uint64, kh *keyHasher) (*candidates, error) {
	gen, err := rule.Generator(n, d)
	if err != nil {
		return nil, err
	}
	c := &candidates{rule: rule, d: d, n: n, gen: gen, keys: kh}
	sizes := make([]uint64, d)
	for j := range d {
		lo, hi := gen.PartBounds(j)
		if rule.Scheme() != hashfn.Parts {
			lo, hi = 0, n
		}
		c.lo[j], sizes[j] = lo, hi-lo
	}
	c.ranks = newRankSource(sizes, 0)
	if kh != nil {
		c.hash = make([]uint64, levelsBatch)
	}
	return c, nil
}

// candBatch holds a batch's candidates: cand[j][i] is ball i's candidate j.
type candBatch = [hashfn.MaxChoices][levelsBatch]uint64

// fill writes the candidates of len(coins) balls into cand and their coins.
func (c *candidates) fill(g *stream, cand *candBatch, coins []uint64) {
	d := c.d
	switch {
	case c.keys != nil:
		h := c.hash[:len(coins)]
		c.keys.fill(h)
		var one [hashfn.MaxChoices]uint64
		for i, x := range h {
			c.gen.Fill(x, one[:d])
			for j := range d {
				cand[j][i] = one[j]
			}
		}
	case c.rule == bucket.DoubleHash:
		c.fillDouble(g, cand, len(coins))
	default:
		c.ranks.fill(g, cand, coins)
		if c.rule.Scheme() == hashfn.Parts {
			for j := 1; j < d; j++ {
				col := cand[j][:len(coins)]
				for i := range col {
					col[i] += c.lo[j]
				}
			}
		}
	}
	c.fillCoins(g, coins)
}

// fillDouble draws uniform double-hashing candidates f + k·g mod n: f
// uniform in [0, n), g uniform over the odd numbers below n (n a power of
// two) or over [1, n) (n prime), as hashfn's Double scheme does from a hash.
func (c *candidates) fillDouble(g *stream, cand *candBatch, balls int) {
	n, d := c.n, c.d
	pow2 := n&(n-1) == 0
	for i := range balls {
		f := g.below(n)
		var step uint64
		if pow2 {
			step = 2*g.below(max(n/2, 1)) + 1
		} else {
			step = 1 + g.below(n-1)
		}
		for j := range d {
			cand[j][i] = f
			f += step
			if f >= n {
				f -= n
			}
		}
	}
}

// fillCoins draws the tie-break bits: one bit per ball for two candidates
// (Choose2 reads the top bit), a word per ball for more (Choose reads the
// top 32 bits), none for the rules without a coin.
func (c *candidates) fillCoins(g *stream, coins []uint64) {
	switch {
	case c.rule == bucket.GoLeft || c.rule == bucket.OneChoice || c.d == 1:
		clear(coins)
	case c.d == 2:
		for i := range coins {
			if c.left == 0 {
				c.spare, c.left = g.next(), 64
			}
			coins[i] = c.spare
			c.spare <<= 1
			c.left--
		}
	default:
		for i := range coins {
			coins[i] = g.next()
		}
	}
}

// arrayRun is one run of the array engine with counters of type T.
type arrayRun[T counter] struct {
	bins []T
	rule bucket.Placement
	d    int
	src  *candidates
	// Two batches: one being placed, the next being touched.
	cand  [2]candBatch
	coins [2][levelsBatch]uint64
	sink  T // touched loads end here, so the compiler keeps them
	// bytes is bins as bytes when the counters are bytes and the
	// processor has a prefetch instruction (see throw); else nil.
	bytes []byte
}

// arrayAhead is how many balls ahead of the one being placed the loop
// touches candidates: far enough that a miss has landed by the time its
// ball is placed, with a few dozen misses in flight at once.
const arrayAhead = 24

// throw places m balls; it returns errWrapped if a load passed T's range.
//
// With byte counters on amd64 the loop computes the next batch's
// candidates and prefetches their bins before placing the current batch;
// otherwise it touches them ball by ball a little ahead (throwTouch).
func (a *arrayRun[T]) throw(m uint64, g *stream) error {
	if a.bytes == nil || a.d > 2 {
		return a.throwTouch(m, g)
	}
	cur := 0
	b := int(min(m, uint64(arrayBatch)))
	a.src.fill(g, &a.cand[cur], a.coins[cur][:b])
	a.prefetchBatch(&a.cand[cur], b)
	var wrapped bool
	for m > 0 {
		m -= uint64(b)
		nb := int(min(m, uint64(arrayBatch)))
		if nb > 0 {
			a.src.fill(g, &a.cand[cur^1], a.coins[cur^1][:nb])
			a.prefetchBatch(&a.cand[cur^1], nb)
		}
		c := &a.cand[cur]
		if a.d == 1 {
			wrapped = a.place1(c[0][:b], nil) || wrapped
		} else {
			wrapped = a.place2(c[0][:b], c[1][:b], a.coins[cur][:b], nil, nil) || wrapped
		}
		cur ^= 1
		b = nb
	}
	if wrapped {
		return errWrapped
	}
	return nil
}

func (a *arrayRun[T]) prefetchBatch(c *candBatch, b int) {
	base := &a.bytes[0]
	for j := range a.d {
		prefetch(base, c[j][:b])
	}
}

// throwTouch is throw with touches (loads) instead of prefetches.
func (a *arrayRun[T]) throwTouch(m uint64, g *stream) error {
	cur := 0
	b := int(min(m, uint64(arrayBatch)))
	a.src.fill(g, &a.cand[cur], a.coins[cur][:b])
	a.touch(&a.cand[cur], b)
	var wrapped bool
	for m > 0 {
		m -= uint64(b)
		nb := int(min(m, uint64(arrayBatch)))
		next := &a.cand[cur^1]
		if nb > 0 {
			a.src.fill(g, next, a.coins[cur^1][:nb])
		}
		c := &a.cand[cur]
		coins := a.coins[cur][:b]
		// Ball i touches ball i+ahead: in this batch for the first
		// b-ahead balls, then in the next one (whose first nb balls are
		// valid).
		split := max(b-arrayAhead, 0)
		tn := min(b-split, nb)   // balls of the next batch touched
		ah := min(arrayAhead, b) // so that [ah:b] is ball i+ahead for i < split
		switch a.d {
		case 1:
			wrapped = a.place1(c[0][:split], c[0][ah:b]) || wrapped
			wrapped = a.place1(c[0][split:split+tn], next[0][:tn]) || wrapped
			wrapped = a.place1(c[0][split+tn:b], nil) || wrapped
		case 2:
			wrapped = a.place2(c[0][:split], c[1][:split], coins[:split], c[0][ah:b], c[1][ah:b]) || wrapped
			wrapped = a.place2(c[0][split:split+tn], c[1][split:split+tn], coins[split:split+tn], next[0][:tn], next[1][:tn]) || wrapped
			wrapped = a.place2(c[0][split+tn:b], c[1][split+tn:b], coins[split+tn:b], nil, nil) || wrapped
		default:
			if nb > 0 {
				a.touch(next, nb)
			}
			wrapped = a.placeD(c, coins) || wrapped
		}
		// The next batch's balls from arrayAhead on are touched by its own
		// first balls; a short last batch may go untouched, which only
		// costs time.
		cur ^= 1
		b = nb
	}
	if wrapped {
		return errWrapped
	}
	return nil
}

// newArrayRun returns a run over bins.
func newArrayRun[T counter](bins []T, rule bucket.Placement, d int, src *candidates) *arrayRun[T] {
	a := &arrayRun[T]{bins: bins, rule: rule, d: d, src: src}
	var zero T
	if hasPrefetch && unsafe.Sizeof(zero) == 1 && len(bins) > 0 {
		a.bytes = unsafe.Slice((*byte)(unsafe.Pointer(&bins[0])), len(bins))
	}
	return a
}

// touch loads the bins of b balls' candidates so that their cache misses
// start now.
func (a *arrayRun[T]) touch(cand *candBatch, b int) { a.touchFrom(cand, 0, b) }

func (a *arrayRun[T]) touchFrom(cand *candBatch, from, to int) {
	var s T
	for j := range a.d {
		for _, c := range cand[j][from:to] {
			s |= a.bins[c]
		}
	}
	a.sink |= s
}

// place1 places one-candidate balls, touching the bins in ahead (nil, or
// as long as cand) as it goes.
func (a *arrayRun[T]) place1(cand, ahead []uint64) bool {
	bins := a.bins
	low := ^T(0) // the least load written: 0 only if a counter wrapped
	var s T
	if ahead != nil {
		ahead = ahead[:len(cand)]
	}
	for i, c := range cand {
		if ahead != nil {
			s |= bins[ahead[i]]
		}
		v := bins[c] + 1
		bins[c] = v
		low = min(low, v)
	}
	a.sink |= s
	return low == 0
}

// place2 places two-candidate balls, touching the bins in ahead0 and
// ahead1 (nil, or as long as c0s) as it goes. The winner is selected with
// a mask rather than a branch (see bucket.Placement.Choose2); with the
// bins already in cache, the store waiting on both loads costs little.
func (a *arrayRun[T]) place2(c0s, c1s, coins, ahead0, ahead1 []uint64) bool {
	bins := a.bins
	rule := a.rule
	c1s = c1s[:len(c0s)]
	coins = coins[:len(c0s)]
	low := ^T(0)
	var s T
	if ahead0 != nil {
		ahead0, ahead1 = ahead0[:len(c0s)], ahead1[:len(c0s)]
		for i, c0 := range c0s {
			s |= bins[ahead0[i]] | bins[ahead1[i]]
			c1 := c1s[i]
			x, y := bins[c0], bins[c1]
			k := rule.Choose2(uint32(x), uint32(y), coins[i])
			mask := -uint64(k)
			c := c0 ^ ((c0 ^ c1) & mask)
			v := (x ^ ((x ^ y) & T(mask))) + 1
			bins[c] = v
			low = min(low, v)
		}
		a.sink |= s
		return low == 0
	}
	for i, c0 := range c0s {
		c1 := c1s[i]
		x, y := bins[c0], bins[c1]
		k := rule.Choose2(uint32(x), uint32(y), coins[i])
		mask := -uint64(k)
		c := c0 ^ ((c0 ^ c1) & mask)
		v := (x ^ ((x ^ y) & T(mask))) + 1
		bins[c] = v
		low = min(low, v)
	}
	return low == 0
}

func (a *arrayRun[T]) placeD(cand *candBatch, coins []uint64) bool {
	d := a.d
	var loads [hashfn.MaxChoices]uint32
	low := ^T(0)
	for i, coin := range coins {
		for j := range d {
			loads[j] = uint32(a.bins[cand[j][i]])
		}
		c := cand[a.rule.Choose(loads[:d], coin)][i]
		v := a.bins[c] + 1
		a.bins[c] = v
		low = min(low, v)
	}
	return low == 0
}

// histogram counts the bins by load, per part.
func (a *arrayRun[T]) histogram() *bucket.Histogram {
	parts := a.rule.Parts(a.d)
	h := bucket.NewHistogram(parts)
	for j := range parts {
		lo, hi := a.src.gen.PartBounds(j)
		var counts [256]uint64
		for _, v := range a.bins[lo:hi] {
			if uint64(v) < 256 {
				counts[v]++
			} else {
				h.Add(j, int(v), 1)
			}
		}
		for k, c := range counts {
			if c != 0 {
				h.Add(j, k, c)
			}
		}
	}
	return h
}

// counterBits is the counter width a run starts with: bytes unless the
// load factor makes a load over 255 plausible. A load that still passes it
// wraps a counter; throw reports that and the run is replayed wider.
func counterBits(n, m uint64) int {
	switch c := float64(m) / float64(n); {
	case c < 100:
		return 8
	case c < 30000:
		return 16
	}
	return 32
}
