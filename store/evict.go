package store

import (
	"math"
	"math/bits"
	"sync/atomic"
)

// Eviction: which entry a new key replaces when its candidates are full.
//
// The candidates' slots (d × BucketSize, 16 by default) are the sample: no
// list of all entries is kept, and no lock but the candidates' is taken.
// Among them the cache evicts the entry whose next use it expects last:
// Belady's rule (evict what is needed farthest in the future), with the
// future estimated from each entry's past. Each slot has a policy word of
// 32 bits, kept in the cache's bucket right before its control word
// (cacheBucket, bucket.go), on the cache lines a Set loads first anyway:
//
//	bits  0–19  tick of the last access (insert, hit or update), in units
//	            of 2^tq ticks (tickUnit); ticks count the keys inserted
//	            into the store (clock.go)
//	bits 20–27  g, the entry's reuse gap: how many ticks pass between its
//	            uses, log-coded (gapCode); noGap while the key has shown
//	            none (it was inserted and not used since, and the ghost did
//	            not know it)
//	bits 28–30  the entry's last gap, the one its last use ended, as a
//	            power of two times g, 2^-4 to 2^3 (lastStep)
//	bit  31     live: set in every live entry's word (liveBit)
//
// g is a running mean of the entry's gaps: each use moves it a share α of
// the way to the gap just seen, the first from a prior gap of some
// capacities (ranking.go). A key the
// cache evicted leaves its word in the ghost (ghost.go), so a key that
// comes back brings its g, moved by the gap since its last use.
//
// The rankings that read a key's last gap rather than a mean (α = 1:
// "due-last-gap", "probation") read it from bits 28–30, so that the words
// another ranking wrote mean the same to them. Were they to read g, a
// cache that moved to one of them would find every key's gap blended from
// the prior of several capacities, a key used twice under "patient" with
// a gap of 4 capacities or more: "probation" would put nearly every key
// on probation, and "due-last-gap" would take the keys a loop is about to
// use for keys due much later, until each key's next use wrote its last
// gap, which the keys it evicts never get. Over the medians of seven hash
// seeds, bench --corpus moved by +1.35 points in sum over its 48 trace
// rows (lirs/multi2 at 25% +0.56, lirs/multi1 at 25% +0.32, lirs/cpp at
// 10% +0.31, no row lower by more than 0.04), by +0.21 over synthetic:all
// at 20,000 keys and, over three seeds, by +0.82 over synthetic:all at its
// default million keys (drift at 25% +0.37), and left its Zipf and aging
// rows as they were.
//
// Under α = 1 the last gap is g, a step of 2^0, so a ranking of α = 1 in
// use reads its gaps exactly as before; the steps matter only for words
// another ranking wrote, which a power of two places well enough. The
// last gap in a code of three significant bits, with ticks narrowed to 17
// bits to make room (ages mod some 120 capacities rather than 1,000),
// moved the trace rows by +1.51 over the same seven seeds: no clear gain
// for a narrower span. Keeping g a mean of α = 1/2 under the rankings of
// α = 1 as well, for a move back from one of them, did not pay: over
// three seeds, +1.77 against +2.12 with the last gap exact, and +0.03
// with it in steps.
//
// A ranking (ranking.go) scores the candidates, and the highest score
// goes, expired entries before all others, the older of two equal scores
// first:
//
//	max(g, age) − (1−λ) · min(g, age),   age = ticks since its last access.
//
// While an entry is within its mean gap that is g − (1−λ)·age; an entry
// unused for longer has shown a gap of at least its age, so it scores as
// one whose gap is its age and whose mean had come due: without that, a
// key once hot and then abandoned would keep its short gap, and its slot,
// forever. λ says how an entry's age bears on its next use:
//
//   - λ = 1: not at all; the largest gap goes, the least frequently used
//     entry. Right when requests are independent draws, whose gaps have no
//     memory (a Zipf workload).
//   - λ = 0: the entry is due g after its last use, so g − age is the time
//     until then and the one due last goes. Right when gaps repeat: a loop
//     over more keys than the cache holds, where evicting the least
//     recently used evicts the key needed next; this keeps a stable subset
//     instead, as Belady's optimum does.
//   - λ = 2.5: an entry unused for longer than its gap is taken to be done
//     with, as under LRU. Right for workloads with shifting working sets.
//
// A key with no gap (noGap) is scored as if its gap were the ranking's
// newcomer gap, some capacities of ticks: longer than the gap of any key
// the cache keeps, so that a key used once goes before the keys used
// again, the way W-TinyLFU's admission and 2Q's probation queue treat
// newcomers, without refusing any key (a Set is never dropped). A ranking
// may also keep such a key for a window of ticks first, as W-TinyLFU's
// window does. One ranking ignores gaps and scores by age alone, as LRU
// does, and one scores by age alone only the keys whose last gap was
// within a capacity and puts the rest on probation, as 2Q does. The cache
// does not settle on one ranking: it runs the one whose miniature cache
// does best on a sample of its keys (shadow.go).
//
// Ages and gaps are taken mod 2^20 units, so an entry left alone for
// nearly 2^20 units (2^20 − maxLag, over 1,000 capacities of inserts; see
// ageOf) would look young again. That
// does not happen to an entry in a cache that inserts: each of its buckets
// is a candidate of some 16 inserts per capacity, and an entry unused for
// a few dozen capacities scores above any entry in use. A cache that
// inserts nothing does not move its ticks.

// liveBit is set in the policy word of every entry, so that no entry's
// word is 0, the word of an empty slot: a hit that raced the entry's
// removal then cannot mistake the emptied slot's word for its entry's
// (table.touch).
const liveBit = 1 << 31

// The policy word's fields (see the table above).
const (
	tickBits  = 20
	tickMask  = 1<<tickBits - 1
	gapShift  = tickBits
	gapMask   = 0xff
	lastShift = gapShift + 8
	lastMask  = 7
)

// noGap is the gap code of a key that has shown no gap yet.
const noGap = 0xff

// Gap codes: a gap in tick units is kept in 8 bits as a float with a
// 3-bit mantissa, exact up to 15 and within 12.5% beyond, up to about
// 2^33: codes 0–15 are the gaps 0–15, and code 16 + 8(e−1) + m, for e ≥ 1
// and m < 8, the gap (8+m)·2^e, up to code 254. gapValue[noGap] is the
// largest value, so that fresh never spares the write of a key's first
// gap.
var gapValue = func() (v [256]uint32) {
	for c := range v {
		if c < 16 {
			v[c] = uint32(c)
			continue
		}
		e, m := (c-16)/8+1, (c-16)%8
		v[c] = uint32(min((8+uint64(m))<<e, math.MaxUint32))
	}
	v[noGap] = math.MaxUint32
	return v
}()

// gapCode returns the code of the largest coded gap not above x.
func gapCode(x uint32) uint8 {
	if x < 16 {
		return uint8(x)
	}
	e := bits.Len32(x) - 4 // x = (8+m)·2^e + rest, 8+m its top 4 bits
	return uint8(min(16+8*(e-1)+int(x>>e&7), noGap-1))
}

// lastSame is the step of a last gap equal to g (see lastStep).
const lastSame = 4

// packAcc builds a policy word from a tick in units (now), a gap code and
// the last gap's step (lastStep).
func packAcc(now uint64, gap, step uint8) uint32 {
	return uint32(now)&tickMask | uint32(gap)<<gapShift | uint32(step)<<lastShift | liveBit
}

// packGap is packAcc for a word whose last gap is its gap g.
func packGap(now uint64, gap uint8) uint32 { return packAcc(now, gap, lastSame) }

// lastStep returns the step that places the last gap, of gap code last,
// from g, of gap code c: q + lastSame for the power of two 2^q, q in −4
// … 3, nearest the last gap's ratio to g. Eight codes double a gap (from
// code 16 on; gapCode), so the ratio's base-2 logarithm is the codes'
// difference over 8, which q rounds: no division and no float on a hit.
func lastStep(last, c uint8) uint8 {
	q := (int(last) - int(c) + 4) >> 3 // arithmetic shift: floor
	return uint8(min(max(q, -lastSame), lastMask-lastSame) + lastSame)
}

// gapCodeOf returns the gap code of the policy word acc.
func gapCodeOf(acc uint32) uint8 { return uint8(acc >> gapShift & gapMask) }

// gapOf returns the slot's reuse gap in tick units (the largest value for
// noGap).
func gapOf(acc uint32) uint32 { return gapValue[gapCodeOf(acc)] }

// lastGapOf returns the last gap of the policy word acc, whose gap code c
// is not noGap: g moved by its step, eight codes a power of two (g itself
// in every word written under α = 1).
func lastGapOf(acc uint32, c uint8) uint32 {
	st := int(acc >> lastShift & lastMask)
	if st == lastSame {
		return gapValue[c]
	}
	return gapValue[min(max(int(c)+8*(st-lastSame), 0), noGap-1)]
}

// ageOf returns how many tick units passed between the slot's last access
// and now (elapsed).
func ageOf(acc uint32, now uint64) uint32 {
	return elapsed((uint32(now)-acc)&tickMask, tickMask, maxLag)
}

// elapsed returns d, a difference of ticks taken mod span+1 (span all
// ones), or 0 when d is within lag of span+1, that is, a little below 0. A
// call reads the striped clock up to maxLag ticks behind another
// (clock.go; even one goroutine's Get and Set may read different
// stripes), so a word another call stamped may be a little ahead of the
// now it is read against. Taken mod span+1, such a difference would be an
// age of nearly the whole span: a hit would blend it into the key's gap,
// so that a key hit just after its insert looked unused for a thousand
// capacities. Policy words and ghost words both read their ages here.
func elapsed(d, span, lag uint32) uint32 {
	if d > span-lag {
		return 0
	}
	return d
}

// policy is the ranking in use and the prior it blends first gaps from
// (ranking.go), which a cache reads on every insert and every hit that
// writes a policy word (shadow.go changes them), and every ranking's
// parameters under each prior in the cache's tick units.
type policy struct {
	// w holds the ranking's index in its low byte and the prior above.
	w     atomic.Uint32
	ranks [numPriors][numRankings]rank
	// moves: evictions relocate (relocate.go), as the miniatures chose.
	moves atomic.Bool
}

// set makes ranking c the one in use, under the same prior. Only the
// shadows' chooser and a new cache write w, one at a time.
func (p *policy) set(c int) { p.w.Store(p.w.Load()&^0xff | uint32(c)) }

// setPrior makes pr the prior, under the same ranking.
func (p *policy) setPrior(pr int) { p.w.Store(p.w.Load()&0xff | uint32(pr)<<8) }

func (p *policy) choice() int { return int(p.w.Load() & 0xff) }
func (p *policy) prior() int  { return int(p.w.Load() >> 8) }

// current returns the parameters of the ranking in use.
func (p *policy) current() *rank {
	w := p.w.Load()
	return &p.ranks[(w>>8)%numPriors][(w&0xff)%uint32(numRankings)]
}

// score returns the victim score of a slot whose word is acc, at tick unit
// now, and its age: the highest score goes, the older of two equal ones.
// Scores are at least 0 (r.m4 is at most 4), but for a key without a gap
// inside the window, which scores below 0, so that it goes only when all
// the candidates are in the window (the oldest of them then).
func (r *rank) score(acc uint32, now uint64) (int64, uint32) {
	age := ageOf(acc, now)
	var g uint32
	c := gapCodeOf(acc)
	seen := gapValue[c]
	if r.shift == 0 && c != noGap {
		seen = lastGapOf(acc, c) // a ranking of α = 1 reads the last gap
	}
	if c != noGap && seen <= r.cut {
		g = seen & r.gmask
	} else if c == noGap && age < r.window {
		return int64(age) - int64(r.window), age
	} else {
		g = r.newGap // a newcomer, or a key on probation
	}
	return 4*int64(max(g, age)) - r.m4*int64(min(g, age)), age
}

// accessed returns the policy word after a use at tick unit now, under
// ranking r: the gap moved a share α of the way to the gap since the last
// use, from firstGap for a key that had none, and the last gap that one.
func (r *rank) accessed(acc uint32, now uint64) uint32 {
	seen := ageOf(acc, now)
	c := gapCode(blendGap(r.gapOf(acc), seen, r.shift))
	return packAcc(now, c, lastStep(gapCode(seen), c))
}

// gapOf returns the gap a use blends from in the policy word acc: its
// gap, or for noGap firstGap, the prior, the same for every ranking (see
// ranking).
func (r *rank) gapOf(acc uint32) uint32 {
	if c := gapCodeOf(acc); c != noGap {
		return gapValue[c]
	}
	return r.firstGap
}

// blendGap moves the mean gap g a share 2^-shift of the way to the gap
// seen.
func blendGap(g, seen uint32, shift uint8) uint32 {
	if seen >= g {
		return g + (seen-g)>>shift
	}
	return g - (g-seen)>>shift
}

// fresh reports whether a use at tick unit now would change the policy
// word acc too little to be worth a write: its last access is under slack
// units old and its gap under 2·slack, so neither would move by more than
// a couple of slacks. A hot key's word is written a few times, as its gap
// comes down, and then left alone, so that cores reading it do not fight
// over its cache line.
func fresh(acc uint32, now uint64, slack uint32) bool {
	return ageOf(acc, now) < slack && gapOf(acc) < 2*slack
}

// victim returns the slot of cs's buckets to evict under ranking r, and
// whether its entry had expired. The caller holds the buckets, and they
// are all full.
func (s *Cache[K, V]) victim(t *cacheTable[K, V], cs []uint64, now uint64, r *rank) (vi uint64, vj int, expired bool) {
	vi, vj, expired, _ = s.victimOf(t, cs, now, r)
	return vi, vj, expired
}

// victimOf is victim for buckets that may have empty slots: ok is false
// if they hold no entry.
func (s *Cache[K, V]) victimOf(t *cacheTable[K, V], cs []uint64, now uint64, r *rank) (vi uint64, vj int, expired, ok bool) {
	var nowNanos int64
	ttl := s.ttl.Load()
	if ttl {
		nowNanos = s.nowNanos()
	}
	best, oldest := int64(math.MinInt64), uint32(0)
	// A bucket named twice is scanned twice, which changes nothing.
	for _, i := range cs {
		me := &t.meta[i]
		cb := t.cbucket(i)
		for m := ctrl(cb.b.ctrl.Load()).full(); m != 0; m &= m - 1 {
			j := slotOf(m)
			if ttl {
				if e := me.exp[j].Load(); e != 0 && e <= nowNanos {
					return i, j, true, true
				}
			}
			if sc, age := r.score(cb.acc[j].Load(), now); !ok || sc > best || sc == best && age > oldest {
				best, oldest, vi, vj, ok = sc, age, i, j, true
			}
		}
	}
	return vi, vj, false, ok
}

// recencySlack returns the slack of fresh for a cache of max entries, in
// ticks: a 256th of the capacity, so that the recency the policy sees is
// off by under half a percent of the cache's turnover.
func recencySlack(maxEntries int) uint32 {
	return uint32(max(maxEntries/256, 1))
}

// tickUnit returns the shift of the policy words' tick unit for a cache
// of max entries: the largest power of two not above half its recency
// slack (1 for a slack under 4). So the slack is 2 or 3 units (1 for a
// slack of 1), and fresh, which compares whole units, spares about as
// many writes as with exact ticks; with a unit of a whole slack, a hit
// one tick after the last access into the next unit would be a write.
func tickUnit(maxEntries int) uint8 {
	return uint8(max(bits.Len32(recencySlack(maxEntries))-2, 0))
}

// tickNow is the tick, as the goroutine with the given hint sees it, in
// the policy words' units.
func (s *Cache[K, V]) tickNow(hint uint64) uint64 { return s.ticks.now(hint) >> s.tq }
