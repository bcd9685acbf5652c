package store

import "time"

// Stats are the counters of a Map or a Cache. Gets = Hits + Misses. The
// fields a type has no use for stay 0: a cache never grows or re-keys and
// has no stash, and a map never evicts or expires.
type Stats struct {
	Gets    uint64 `json:"gets"`
	Hits    uint64 `json:"hits"`
	Misses  uint64 `json:"misses"`
	Sets    uint64 `json:"sets"`    // calls to Set, new keys and updates
	Deletes uint64 `json:"deletes"` // calls to Delete that removed a key
	Grows   uint64 `json:"grows"`   // growths started
	// Rekeys counts the times a map moved its keys to a new hash function because they collided far more than the fluid limit
	// allows (see "Hash flooding" in the package documentation).
	Rekeys uint64 `json:"rekeys"`
	// A cache's entries evicted to make room for a new key, for the
	// weight bound or by SetMaximum lowering its bound, and expired
	// entries removed (by a Get, Set, Compute or Delete of their key, to
	// make room, by a growth of the table or by RemoveExpired). A Set of
	// a key whose entry had expired counts as an expiration and a Set of
	// a new key, as the deletion listener hears of it.
	Evictions   uint64 `json:"evictions"`
	Expirations uint64 `json:"expirations"`
	Entries     int    `json:"entries"`
	Buckets     int    `json:"buckets"` // buckets of the current table
	Stash       int    `json:"stash"`   // entries in the stash(es)
	Growing     bool   `json:"growing"` // keys are moving to a bigger table
	// Relocations counts a cache's entries moved to their other
	// candidate bucket to make room for a new key, which then evicted an
	// entry of that bucket (see "Relocation" in the package
	// documentation).
	Relocations uint64 `json:"relocations,omitempty"`

	// A cache's refreshes started (CacheOptions.RefreshAfter), and those
	// whose loader returned an error or panicked. A refresh that stores
	// its value also counts as a Set.
	Refreshes       uint64 `json:"refreshes,omitempty"`
	RefreshFailures uint64 `json:"refresh_failures,omitempty"`
	// A cache's loader calls (GetOrLoad, GetOrLoadAll): those that
	// returned values, those that returned an error or panicked, and the
	// time they took in all. LoadTime / (LoadSuccesses + LoadFailures) is
	// the mean time of a load.
	LoadSuccesses uint64        `json:"load_successes"`
	LoadFailures  uint64        `json:"load_failures"`
	LoadTime      time.Duration `json:"load_time_ns"`
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
func (s *Map[K, V]) Stats() Stats {
	s.mu.Lock()
	grows, rekeys := s.grows, s.flood.rekeys
	s.mu.Unlock()
	hits, misses := s.tot.sum()
	sets, deletes := s.tot.sumMap()
	m := &s.mono
	hits, misses = m.at(monoHits, hits), m.at(monoMisses, misses)
	st := s.tabs.Load()
	stash := st.cur.stash.len()
	if st.old != nil {
		stash += st.old.stash.len()
	}
	return Stats{
		Gets:    hits + misses,
		Hits:    hits,
		Misses:  misses,
		Sets:    m.at(monoSets, sets),
		Deletes: m.at(monoDeletes, deletes),
		Grows:   grows,
		Rekeys:  rekeys,
		Entries: s.Len(),
		Buckets: int(st.cur.n),
		Stash:   stash,
		Growing: st.old != nil,
	}
}

// Stats returns the counters, with the guarantees of [Map.Stats]. A
// cache's writers take no cache-wide lock, so they count in the stripes
// too, and a Set of a new key is counted by the eviction clock's tick
// alone (counters.go).
func (s *Cache[K, V]) Stats() Stats {
	hits, misses := s.tot.sum()
	ev, ex, sets, deletes := s.tot.sumCache(s.ticks.total())
	m := &s.mono
	hits, misses = m.at(monoHits, hits), m.at(monoMisses, misses)
	st := Stats{
		Gets:        hits + misses,
		Hits:        hits,
		Misses:      misses,
		Sets:        m.at(monoSets, sets),
		Deletes:     m.at(monoDeletes, deletes),
		Evictions:   m.at(monoEvictions, ev),
		Expirations: m.at(monoExpirations, ex),
		Entries:     s.Len(),
		Buckets:     int(s.tab.Load().n),
		Relocations: s.tot.relocations(),

		Refreshes:       s.refreshes.Load(),
		RefreshFailures: s.refreshFailures.Load(),
	}
	if l := s.lds.Load(); l != nil {
		st.LoadSuccesses, st.LoadFailures = l.successes.Load(), l.failures.Load()
		st.LoadTime = time.Duration(l.nanos.Load())
	}
	return st
}
