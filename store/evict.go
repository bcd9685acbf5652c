package store

import (
	"math"
	"math/bits"
)

// Eviction: which entry a new key replaces when its candidates are full.
//
// The candidates' slots (d × BucketSize, 16 by default) are the sample: no
// list of all entries is kept, and no lock but the candidates' is taken.
// Each slot has a policy word of 32 bits, kept in the cache's bucket right
// before its control word (cacheBucket, bucket.go), on the cache lines a
// Set loads first anyway:
//
//	bits  0–19  tick of the last access (insert, hit or update), in units
//	            of 2^tq ticks (tickUnit); ticks count the keys inserted
//	            into the store (clock.go)
//	bits 20–23  hits: how often the key was used since it came in, plus
//	            what the sketch remembered of it when it came in
//	bits 24–29  the sketch generation that hits was counted in, mod 64
//	bit  30     used: hit or updated since it came in (usedBit)
//	bit  31     live: set in every live entry's word (liveBit)
//
// The tick unit is at most half the recency slack (a 256th of the
// capacity, recencySlack; tickUnit), so it costs the policy little
// precision: a hit already left the word alone within the slack.
// Ages and generations are differences mod 2^20 units and mod 64, which
// wrap: an entry left alone for 2^20 units (over 1,000 capacities of
// inserts) would look young again, and one whose count is 64 generations
// old (1,024 capacities) would get its count back. Neither happens to an
// entry in a cache that inserts: an entry untouched for 8 capacities
// scores above any newcomer (its bonus is at most 15 × weight = 7.5
// capacities), and each of its buckets is a candidate of some 16 inserts
// per capacity, so it goes long before either wraps. A cache that
// inserts nothing does not move its ticks.
//
// The victim is the slot with the highest score
//
//	age − weight × hits,   age = tick units since its last access
//
// with expired entries before all others. Recency is the age; frequency
// buys time: each hit keeps an entry weight ticks longer, so a key used
// often survives a burst of one-off keys, and a key never used again is
// evicted once its bonus is spent. A new key's hits start at what the
// sketch (sketch.go) knows of it: a key evicted while hot comes back with
// its count, a key seen for the first time starts at 0 and is the first
// to go if it is not used again (the way W-TinyLFU's window and 2Q's
// probation queue treat newcomers, without refusing any key: a Set is
// never dropped). Hit counts age with the sketch: when the sketch halves
// its counters (a new generation), a slot's count is halved too, lazily,
// the next time it is read.
//
// weight is a fraction of the capacity (weightNum / weightDen): chosen on
// the OLTP and P12 traces and on Zipf workloads (see the README's
// figures).
var weightNum, weightDen = int64(1), int64(2)

// hitsCap bounds the hit count a slot keeps.
const hitsCap = counterMax

// usedBit marks a slot hit or updated since its key came in. A victim
// without it has only the hits the sketch gave it on the way in, which
// the sketch still holds (it counted that insert too, and halves its
// counters as the slot's count is halved), so telling the sketch about
// it again would be a cache miss for nothing (setCache).
const usedBit = 1 << 30

// liveBit is set in the policy word of every entry, so that no entry's
// word is 0, the word of an empty slot: a hit that raced the entry's
// removal then cannot mistake the emptied slot's word for its entry's
// (table.touch).
const liveBit = 1 << 31

// The policy word's fields (see the table above): the tick's width,
// ages being taken mod 2^tickBits units, and where hits and the
// generation start.
const (
	tickBits  = 20
	tickMask  = 1<<tickBits - 1
	hitsShift = tickBits
	genShift  = hitsShift + 4
	genMask   = 63
)

// packAcc builds a policy word from a tick in units (now), a hit count and
// a sketch generation.
func packAcc(now uint64, hits uint8, gen uint32) uint32 {
	return uint32(now)&tickMask | uint32(hits)<<hitsShift | (gen&genMask)<<genShift | liveBit
}

// hitsOf returns the slot's hit count in generation gen: halved once for
// every generation since it was counted.
func hitsOf(acc uint32, gen uint32) uint8 {
	d := (gen - acc>>genShift) & genMask
	if d >= 8 {
		return 0
	}
	return uint8(acc>>hitsShift&counterMax) >> d
}

// ageOf returns how many tick units passed between the slot's last access
// and now.
func ageOf(acc uint32, now uint64) uint32 { return (uint32(now) - acc) & tickMask }

// accessed returns the policy word after a hit at tick unit now.
func accessed(acc uint32, now uint64, gen uint32) uint32 {
	return packAcc(now, min(hitsOf(acc, gen)+1, hitsCap), gen) | usedBit
}

// fresh reports whether a hit at tick unit now would change the policy
// word acc too little to be worth a write: the hit count is at its cap (or
// would not change) and the last access is under slack units old.
func fresh(acc uint32, now uint64, gen uint32, slack uint32) bool {
	return ageOf(acc, now) < slack && hitsOf(acc, gen) == hitsCap && (acc>>genShift)&genMask == gen&genMask
}

// inserted returns the policy word of a key inserted at tick unit now
// with what the sketch knows of it.
func inserted(now uint64, hits uint8, gen uint32) uint32 {
	return packAcc(now, min(hits, hitsCap), gen)
}

// victim returns the slot of cs's buckets to evict, and whether its entry
// had expired. The caller holds the buckets, and they are all full.
func (s *Store[K, V]) victim(t *table[K, V], cs []uint64, now uint64, gen uint32) (vi uint64, vj int, expired bool) {
	var nowNanos int64
	ttl := s.ttl.Load()
	if ttl {
		nowNanos = s.nowNanos()
	}
	best := int64(math.MinInt64)
	// A bucket named twice is scanned twice, which changes nothing.
	for _, i := range cs {
		me := &t.meta[i]
		cb := t.cbucket(i)
		for m := ctrl(cb.b.ctrl.Load()).full(); m != 0; m &= m - 1 {
			j := slotOf(m)
			if ttl {
				if e := me.exp[j].Load(); e != 0 && e <= nowNanos {
					return i, j, true
				}
			}
			acc := cb.acc[j].Load()
			score := int64(ageOf(acc, now)) - s.weight*int64(hitsOf(acc, gen))
			if score > best {
				best, vi, vj = score, i, j
			}
		}
	}
	return vi, vj, false
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
func (s *Store[K, V]) tickNow(hint uint64) uint64 { return s.ticks.now(hint) >> s.tq }

// evictWeight returns the weight of one hit for a cache of max entries, in
// ticks.
func evictWeight(maxEntries int) int64 {
	return max(int64(maxEntries)*weightNum/weightDen, 1)
}
