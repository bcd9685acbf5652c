package store

// Stats are the store's counters. Gets = Hits + Misses.
type Stats struct {
	Gets    uint64 `json:"gets"`
	Hits    uint64 `json:"hits"`
	Misses  uint64 `json:"misses"`
	Sets    uint64 `json:"sets"`    // calls to Set, new keys and updates
	Deletes uint64 `json:"deletes"` // calls to Delete that removed a key
	Grows   uint64 `json:"grows"`   // growths started
	// Rekeys counts the times an unbounded store moved its keys to a new
	// hash function because they collided far more than the fluid limit
	// allows (see "Hash flooding" in the package documentation).
	Rekeys uint64 `json:"rekeys"`
	// Bounded stores: entries evicted to make room for a new key, and
	// expired entries removed (by a Get or Delete of their key, or to
	// make room; a Set of the key replaces an expired entry as an update).
	Evictions   uint64 `json:"evictions"`
	Expirations uint64 `json:"expirations"`
	Entries     int    `json:"entries"`
	Buckets     int    `json:"buckets"` // buckets of the current table
	Stash       int    `json:"stash"`   // entries in the stash(es)
	Growing     bool   `json:"growing"` // keys are moving to a bigger table
}

// HitRatio returns Hits / Gets, or 0 before the first Get.
func (st Stats) HitRatio() float64 {
	if st.Gets == 0 {
		return 0
	}
	return float64(st.Hits) / float64(st.Gets)
}

// Stats returns the counters. Hits and misses are counted in striped
// counters (counters.go), so that a Get writes no shared cache line; Stats
// adds up the stripes. Every counter is monotonic: each figure Stats
// returns is at least any figure it returned before, whatever the writers
// do (a scraper reads a counter that falls as a restart), and exact once
// the calls it counts have returned. Taken while other goroutines work,
// the figures are each a count at some moment during the call, not all at
// the same one, and may lag the calls in flight.
func (s *Store[K, V]) Stats() Stats {
	s.mu.Lock()
	sets, deletes, grows, rekeys := s.sets, s.deletes, s.grows, s.flood.rekeys
	s.mu.Unlock()
	hits, misses := s.tot.sum()
	var inserts uint64
	if s.ticks != nil {
		inserts = s.ticks.total()
	}
	ev, ex, csets, cdeletes := s.tot.sumCache(inserts)
	m := &s.mono
	hits, misses = m.at(monoHits, hits), m.at(monoMisses, misses)
	sets = m.at(monoSets, sets+csets)
	deletes = m.at(monoDeletes, deletes+cdeletes)
	ev, ex = m.at(monoEvictions, ev), m.at(monoExpirations, ex)
	st := s.tabs.Load()
	stash := st.cur.stash.len()
	if st.old != nil {
		stash += st.old.stash.len()
	}
	return Stats{
		Gets:        hits + misses,
		Hits:        hits,
		Misses:      misses,
		Sets:        sets,
		Deletes:     deletes,
		Grows:       grows,
		Rekeys:      rekeys,
		Evictions:   ev,
		Expirations: ex,
		Entries:     s.Len(),
		Buckets:     int(st.cur.n),
		Stash:       stash,
		Growing:     st.old != nil,
	}
}
