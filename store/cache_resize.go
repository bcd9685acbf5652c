package store

// SetMaximum changes the bound of a live cache (CacheOptions.MaxEntries)
// to n entries, and returns an error wrapping ErrOptions, changing
// nothing, for a bound NewCache would refuse: n ≤ 0, above
// MaxCacheEntries, or below the buckets the placement rule needs.
//
// It replaces the table as a growth does (cache_grow.go): writers wait
// while the entries are copied (about 50 ns an entry), readers read the
// old table until the new one is published, and a write that waited lands
// in the new table, so no Set, Delete or Compute is lost. The copy goes
// into the table that holds the entries under the new bound: to a lower
// bound, its final table of n slots, where the eviction policy picks, in
// each new key's candidate buckets, the entries that do not fit (each
// reported to the deletion listener as evicted, and counted in
// Stats.Evictions); to a higher bound, the table on its path that holds
// them without evicting, from which the cache grows into the new bound as
// entries arrive, as a new cache does. Expired entries are dropped on the
// way (as expired). Options, Report and Save give the new bound, so a
// cache that OpenCache restores keeps it.
//
// The eviction policy keeps the scale it took from the bound the cache
// was made with (or restored with): the unit of its clock (a 512th to a
// 1,024th of that bound in inserts), the window and the newcomer gap of
// its rankings (in capacities of that bound), and the size of the
// miniature caches that choose the ranking. They are read by every Get and Set without a
// lock, and the entries' policy words are written in the clock's unit, so
// changing them live would cost every operation an atomic load or an
// indirection; and ages and gaps are counted in inserts, which a new
// bound does not change. Its record of evicted keys (the ghost) belongs to
// the table and is sized anew. After a change of the bound by a large
// factor, a cache made with the new bound (NewCache, or Save and
// OpenCache) ranks its entries at its own scale.
func (s *Cache[K, V]) SetMaximum(n int) error {
	s.mu.Lock()
	t := s.tab.Load()
	o := s.configOf(t)
	o.MaxEntries = n
	o, err := resolveCache(o)
	if err != nil || n == t.bound {
		s.mu.Unlock()
		return err
	}
	// The tables that hold the live entries under the new bound: the
	// copy makes one of them, and evicts only into the final one.
	sizes := sizesFor(&o, t.live.Load())
	s.freeze(t)
	nt := s.rebuild(t, &o, sizes, nil)
	s.tab.Store(nt)
	s.mu.Unlock()
	s.flushReports()
	return nil
}
