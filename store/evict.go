package store

import "math"

// Eviction: which entry a new key replaces when its candidates are full.
//
// The candidates' slots (d × BucketSize, 16 by default) are the sample: no
// list of all entries is kept, and no lock but the candidates' is taken.
// Each slot has a policy word:
//
//	bits  0–31  tick of the last access (insert, hit or update): ticks count
//	            the keys inserted into the store (clock.go)
//	bits 32–39  hits: how often the key was used since it came in, plus
//	            what the sketch remembered of it when it came in
//	bits 40–47  the sketch generation that hits was counted in
//	bit  48     used: hit or updated since it came in (usedBit)
//	bit  49     live: set in every live entry's word (liveBit)
//
// The victim is the slot with the highest score
//
//	age − weight × hits,   age = ticks since its last access
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
const usedBit = 1 << 48

// liveBit is set in the policy word of every entry, so that no entry's
// word is 0, the word of an empty slot: a hit that raced the entry's
// removal then cannot mistake the emptied slot's word for its entry's
// (table.touch).
const liveBit = 1 << 49

func packAcc(tick uint64, hits uint8, gen uint32) uint64 {
	return uint64(uint32(tick)) | uint64(hits)<<32 | uint64(uint8(gen))<<40 | liveBit
}

// hitsOf returns the slot's hit count in generation gen: halved once for
// every generation since it was counted.
func hitsOf(acc uint64, gen uint32) uint8 {
	d := uint8(gen) - uint8(acc>>40)
	if d >= 8 {
		return 0
	}
	return uint8(acc>>32) >> d
}

// accessed returns the policy word after a hit at tick now.
func accessed(acc, now uint64, gen uint32) uint64 {
	return packAcc(now, min(hitsOf(acc, gen)+1, hitsCap), gen) | usedBit
}

// fresh reports whether a hit at tick now would change the policy word
// acc too little to be worth a write: the hit count is at its cap (or
// would not change) and the last access is under slack ticks old.
func fresh(acc, now uint64, gen uint32, slack uint32) bool {
	return uint32(now)-uint32(acc) < slack && hitsOf(acc, gen) == hitsCap && uint8(acc>>40) == uint8(gen)
}

// inserted returns the policy word of a key inserted at tick now with
// what the sketch knows of it.
func inserted(now uint64, hits uint8, gen uint32) uint64 {
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
		for m := ctrl(t.bucket(i).ctrl.Load()).full(); m != 0; m &= m - 1 {
			j := slotOf(m)
			if ttl {
				if e := me.exp[j].Load(); e != 0 && e <= nowNanos {
					return i, j, true
				}
			}
			acc := me.acc[j].Load()
			score := int64(uint32(now)-uint32(acc)) - s.weight*int64(hitsOf(acc, gen))
			if score > best {
				best, vi, vj = score, i, j
			}
		}
	}
	return vi, vj, false
}

// recencySlack returns the slack of fresh for a cache of max entries: a
// 256th of the capacity, so that the recency the policy sees is off by
// under half a percent of the cache's turnover.
func recencySlack(maxEntries int) uint32 {
	return uint32(max(maxEntries/256, 1))
}

// evictWeight returns the weight of one hit for a cache of max entries.
func evictWeight(maxEntries int) int64 {
	return max(int64(maxEntries)*weightNum/weightDen, 1)
}
