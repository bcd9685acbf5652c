package store

import (
	"math/bits"
	"sync/atomic"

	"github.com/twochoice/twochoice/hashfn"
)

// ghost remembers the policy words of keys a cache evicted, so that a key
// that comes back is known for its reuse gap (evict.go): a key needed
// again just after it was evicted comes back with a short gap and stays,
// and a key evicted long ago comes back with the long gap it showed. It is
// a direct-mapped table of ghostPerEntry 32-bit words per cache entry (16
// bytes an entry), each an 8-bit fingerprint of the key's hash, the
// evicted word's gap code and the tick of its last access:
//
//	bits  0–15  the tick of the key's last access, in units of 2^shift
//	            policy units: enough for 2^16 units to span 64 capacities,
//	            twice the longest newcomer gap (ranking.go)
//	bits 16–23  its gap code
//	bits 24–31  fingerprint, 1 to 255; 0 is an empty word
//
// A newer eviction that maps to the same word overwrites it, and a key
// takes its word when it comes back, so the ghost holds the most recent
// evictions, up to about four capacities of them. A fingerprint that
// matches another key's word, 1 in 255 of the collisions, gives the key
// that word's history: a frequency estimate does not mind (the sketch of
// W-TinyLFU errs the same way).
//
// Words are read and written with relaxed atomics (relaxed_amd64.go): two
// writers racing on one word leave one of their words, which is all a
// ghost promises.
type ghost struct {
	words []atomic.Uint32
	mask  uint64
	shift uint8 // the ghost's tick unit, in policy units
}

// ghostPerEntry is the ghost's words per cache entry, rounded up to a
// power of two in all. Two words an entry take a mean of 0.15 points of
// hit ratio off what four give on the trace corpus (bench --corpus).
const ghostPerEntry = 4

// ghostSalt makes a key's ghost word independent of its candidates.
const ghostSalt = 0x5bd1e9955bd1e995

// init sizes the ghost for a cache of capacity entries, capUnits policy
// tick units of inserts.
func (g *ghost) init(capacity int, capUnits uint64) {
	n := uint64(1) << bits.Len64(uint64(max(ghostPerEntry*capacity, 64))-1)
	g.words = make([]atomic.Uint32, n)
	g.mask = n - 1
	g.shift = ghostShift(capUnits)
}

// ghostShift returns the shift that makes 2^16 ghost ticks span 64
// capacities of capUnits policy units.
func ghostShift(capUnits uint64) uint8 {
	return uint8(max(bits.Len64(capUnits)+6-16, 0))
}

// spot returns the word of the key with hash h and its fingerprint.
func (g *ghost) spot(h uint64) (*atomic.Uint32, uint32) {
	x := hashfn.Mix(h ^ ghostSalt)
	return &g.words[x&g.mask], uint32(1 + (x>>32)%255)
}

// take returns the gap code and the age at tick unit now that a key with
// hash h left when it was evicted, if the ghost still has them, and
// forgets them.
func (g *ghost) take(h uint64, now uint64) (gap uint8, age uint32, ok bool) {
	w, fp := g.spot(h)
	x := w.Load()
	if x == 0 || x>>24 != fp {
		return 0, 0, false
	}
	storeRelaxed32(w, 0)
	gap, age = ghostRead(x, now, g.shift)
	return gap, age, true
}

// put remembers the policy word acc of an evicted key with hash h.
func (g *ghost) put(h uint64, acc uint32, now uint64) {
	w, fp := g.spot(h)
	storeRelaxed32(w, ghostWord(acc, now, g.shift, fp))
}

// ghostWord packs a policy word acc, read at tick unit now, into a ghost
// word with fingerprint fp.
func ghostWord(acc uint32, now uint64, shift uint8, fp uint32) uint32 {
	last := (now - uint64(ageOf(acc, now))) >> shift
	return uint32(last)&0xffff | (acc>>gapShift&gapMask)<<16 | fp<<24
}

// ghostRead unpacks a ghost word at tick unit now: its gap code and its
// age (elapsed: a word written up to maxLag ticks ahead of now has age 0).
func ghostRead(x uint32, now uint64, shift uint8) (gap uint8, age uint32) {
	d := elapsed((uint32(now>>shift)-x)&0xffff, 0xffff, maxLag>>shift+1)
	return uint8(x >> 16 & gapMask), d << shift
}

// newcomer returns the policy word of a key inserted at tick unit now
// under ranking r: with the gap the ghost gave (code gap), moved as a hit
// would by the time since its last use (age), or no gap if the ghost did
// not know it.
func (r *rank) newcomer(gap uint8, age uint32, known bool, now uint64) uint32 {
	if !known {
		return packGap(now, noGap)
	}
	return r.accessed(packGap(now-uint64(age), gap), now)
}
