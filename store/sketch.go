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

// spot is one counter: its word and the shift of its 4 bits.
type spot struct {
	w     *atomic.Uint64
	shift uint
}

// spots returns the key's 4 counters. The key's hash is mixed again, so
// the counters do not follow the bits that pick its buckets and tag.
func (s *sketch) spots(h uint64) [sketchRows]spot {
	x := hashfn.Mix(h ^ sketchSalt)
	base := (x & s.blocks) * blockWords
	var sp [sketchRows]spot
	for r := range sketchRows {
		w := base + uint64(2*r) + (x>>(32+r))&1
		sp[r] = spot{&s.words[w], uint(x>>(40+4*r)&15) * 4}
	}
	return sp
}

func (p spot) get() uint8 { return uint8(p.w.Load() >> p.shift & counterMax) }

// add counts one occurrence of the key whose counters spots returned
// and returns its new estimate. It raises only the counters at the
// minimum (the conservative update), which keeps estimates of rare keys
// from being inflated by the frequent keys they share counters with.
func (s *sketch) add(sp *[sketchRows]spot) uint8 {
	m := uint8(counterMax)
	for _, p := range sp {
		m = min(m, p.get())
	}
	if m == counterMax {
		return m
	}
	for _, p := range sp {
		p.raiseTo(m + 1)
	}
	return m + 1
}

// raise makes the key's estimate at least f (f ≤ counterMax).
func (s *sketch) raise(h uint64, f uint8) {
	if f == 0 {
		return
	}
	for _, p := range s.spots(h) {
		p.raiseTo(f)
	}
}

// raiseTo sets the counter to f if it is below f.
func (p spot) raiseTo(f uint8) {
	for {
		w := p.w.Load()
		if uint8(w>>p.shift&counterMax) >= f {
			return
		}
		nw := w&^(counterMax<<p.shift) | uint64(f)<<p.shift
		if casRelaxed(p.w, w, nw) {
			return
		}
	}
}

// estimate returns the key's frequency: the least of its counters.
func (s *sketch) estimate(h uint64) uint8 {
	m := uint8(counterMax)
	for _, p := range s.spots(h) {
		m = min(m, p.get())
	}
	return m
}

// advance starts a new period if the tick count crossed a period boundary
// between before and after: it halves every counter and moves gen on. It
// costs one pass over the sketch (a word per entry), once per period.
func (s *sketch) advance(before, after uint64) {
	if before/s.period == after/s.period {
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
