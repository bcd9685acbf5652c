package store

import (
	"math/bits"
	"sync/atomic"

	"github.com/twochoice/twochoice/hashfn"
)

// sketch is the frequency memory of a bounded store: a count-min sketch
// of 4-bit counters, as in TinyLFU (Einziger, Friedman and Manes, "TinyLFU:
// A Highly Efficient Cache Admission Policy", 2017). A key's frequency is
// the least of its 4 counters, one in each of 4 rows; the 4 counters of a
// key share one 64-byte block (8 words), so counting a key costs one cache
// line, as in Caffeine's sketch. It counts the keys inserted, and keeps
// the hit counts of the keys the cache evicts (evict.go), so a key that
// comes back after an eviction is known for what it was: what lets the
// eviction policy tell a returning hot key from a one-off.
//
// Every period ticks (inserts), every counter is halved, so the sketch
// forgets old popularity; gen counts the halvings, and slots age their own
// hit counters by the same halvings lazily (evict.go).
//
// Counters are raised with casRelaxed (relaxed_amd64.go): on amd64 a
// plain store of the new word, no locked instruction, so two
// writers raising counters in the same word at the same instant may lose
// one raise, or one may undo a halving of that word for the rest of the
// period; other builds compare-and-swap. Either leaves one
// key's estimate off by a count now and then, which a frequency estimate
// does not mind (Caffeine's and otter's sketches are not atomic either).
// A reader may see a count a moment old.
type sketch struct {
	words  []atomic.Uint64
	blocks uint64 // mask of the block index: blocks - 1
	period uint64 // ticks between halvings
	gen    atomic.Uint32
}

const (
	counterMax   = 15
	blockWords   = 8
	sketchRows   = 4
	sketchSalt   = 0x5bd1e9955bd1e995
	halfCounters = 0x7777777777777777 // the low 3 bits of every counter
)

// sketchPeriod is the number of inserts between halvings, in multiples of
// the capacity. TinyLFU counts 10 × capacity accesses; this sketch counts
// inserts and evicted keys' hits, a sparser stream. On OLTP, 16 gave
// 40.5% at 1,000 entries where 8 gave 40.1% and 4 gave 39.3% (the larger
// sizes moved by under 0.3 points); 32 was no better.
const sketchPeriod = 16

// init sizes the sketch for a cache of the given capacity: 16 counters
// per entry (one word), rounded up to a power of two.
func (s *sketch) init(capacity int) {
	words := uint64(1) << bits.Len64(uint64(max(capacity, blockWords)-1))
	s.words = make([]atomic.Uint64, words)
	s.blocks = words/blockWords - 1
	s.period = uint64(max(capacity, 64)) * sketchPeriod
}

// spots are a key's 4 counters: its block of the sketch and the mixed
// hash that picks a word and a 4-bit counter in each row. Two words, so
// that locating a key's counters costs a multiply and a mask, and the
// words and shifts are worked out where they are used: a cache Set
// locates the counters of every key to prefetch its block, but only a
// new key reads them.
type spots struct {
	blk *[blockWords]atomic.Uint64
	x   uint64
}

// spots locates the key's counters. The key's hash is mixed again, so the
// counters do not follow the bits that pick its buckets and tag.
func (s *sketch) spots(h uint64) spots {
	x := hashfn.Mix(h ^ sketchSalt)
	return spots{(*[blockWords]atomic.Uint64)(s.words[(x&s.blocks)*blockWords:]), x}
}

// word returns the word of row r's counter: one of the row's 2 words of
// the block.
func (p spots) word(r int) *atomic.Uint64 { return &p.blk[2*r+int(p.x>>(32+r)&1)] }

// shift returns the shift of row r's counter in its word.
func (p spots) shift(r int) uint { return uint(p.x>>(40+4*r)&15) * 4 }

// get returns row r's counter.
func (p spots) get(r int) uint8 { return uint8(p.word(r).Load() >> p.shift(r) & counterMax) }

// min returns the least of the key's counters: its estimate.
func (p spots) min() uint8 {
	m := uint8(counterMax)
	for r := range sketchRows {
		m = min(m, p.get(r))
	}
	return m
}

// add counts one occurrence of the key whose counters are sp and returns
// its new estimate. It raises only the counters at the minimum (the
// conservative update), which keeps estimates of rare keys from being
// inflated by the frequent keys they share counters with.
func (s *sketch) add(sp spots) uint8 {
	m := sp.min()
	if m == counterMax {
		return m
	}
	sp.raiseTo(m + 1)
	return m + 1
}

// raise makes the key's estimate at least f (f ≤ counterMax).
func (s *sketch) raise(h uint64, f uint8) {
	if f == 0 {
		return
	}
	s.spots(h).raiseTo(f)
}

// raiseTo sets each of the key's counters that is below f to f.
func (p spots) raiseTo(f uint8) {
	for r := range sketchRows {
		w, sh := p.word(r), p.shift(r)
		for {
			old := w.Load()
			if uint8(old>>sh&counterMax) >= f {
				break
			}
			nw := old&^(counterMax<<sh) | uint64(f)<<sh
			if casRelaxed(w, old, nw) {
				break
			}
		}
	}
}

// estimate returns the key's frequency: the least of its counters.
func (s *sketch) estimate(h uint64) uint8 { return s.spots(h).min() }

// advance starts a new period if the tick count crossed a period boundary
// between before and after: it halves every counter and moves gen on. It
// costs one pass over the sketch (a word per entry), once per period.
func (s *sketch) advance(before, after uint64) {
	if before == after || before/s.period == after/s.period {
		return
	}
	for i := range s.words {
		for {
			w := s.words[i].Load()
			if s.words[i].CompareAndSwap(w, w>>1&halfCounters) {
				break
			}
		}
	}
	s.gen.Add(1)
}
