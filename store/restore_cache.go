package store

import (
	"fmt"
	"reflect"

	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/snapshot"
)

// Caches far larger than their entries.
//
// A cache's table grows as entries arrive (cache_grow.go), so a snapshot
// of a cache records the table it had: one of the sizes on its path
// (cacheSizes), up to the final one. A cache that filled and then lost
// most of its entries keeps its final table, and a doctored file may claim
// any size on the path with a handful of records. So OpenCache restores
// a cache as OpenMap restores a map (restore_sparse.go): in place while
// the table is at most sparseFactor times the one its entries need
// (sizesFor) or takes at most sparseFloor bytes, and otherwise sparsely,
// into the table on the path that holds its entries, as Set would place
// them. What Open allocates for a cache thus follows the entries the file
// claims, which its size bounds, and not the bound it records.

// isSparseCache reports whether the cache table that m describes is to be
// restored sparsely, under the cache's options o (see above).
func isSparseCache[K comparable, V any](o *config, m *snapshot.Meta) bool {
	bucketBytes := uint64(reflect.TypeFor[cacheBucket[K, V]]().Size() + reflect.TypeFor[bucketMeta]().Size())
	need := sizesFor(o, int64(m.Entries))[0]
	return m.Buckets > sparseFactor*need && m.Buckets > sparseFloor/bucketBytes
}

// restoreCacheSparse reads every record of r, checks it against the table
// m describes, and places it afresh into the table on the cache's path
// that holds m.Entries entries (a larger one if a key finds its candidates
// full there), which it returns. Errors name the file.
func restoreCacheSparse[K comparable, V any](s *Cache[K, V], r *snapshot.Reader, m *snapshot.Meta) (*cacheTable[K, V], error) {
	o := &s.cfg
	w, err := newSparseRecords[K, V](r, o, m)
	if err != nil {
		return nil, err
	}
	// The file's bucket sizes: the final table's first short buckets have
	// one slot fewer; a table on the way has BucketSize slots in each.
	nf, size, short, _ := cacheSize(o)
	if m.Buckets != nf {
		size, short = o.BucketSize, 0
	}
	sizes := sizesFor(o, int64(m.Entries))
	t := s.newTable(o, sizes[0])
	tick := s.tickNow(0)
	acc := packGap(tick, gapCode(uint32(o.MaxEntries>>s.tq)))
	rk := s.pol.current()
	err = w.forEach(r, sparseTarget[K, V]{
		hash: func(k K) uint64 { return t.hash(k) },
		room: func(bi uint64) int {
			if bi < short {
				return size - 1
			}
			return size
		},
		stash: func(k K) error {
			return fmt.Errorf("%w: key %v recorded in the stash of a cache, which has none", ErrCorrupt, k)
		},
		place: func(k K, v V, expiry int64, h uint64) error {
			var c [hashfn.MaxChoices]uint64
			cs := t.cands(h, &c)
			if err := checkNew(k, tagOf(h), cs, t.bucket); err != nil {
				return err
			}
			if expiry != 0 && !s.ttl.Load() {
				s.ttl.Store(true)
			}
			for !s.place(t, cs, k, v, h, expiry, w.now, acc, 0, t.final, tick, rk) && !t.final { // weighed once restored (weighAll)
				// Candidates full in a table on the way: the next size.
				t = s.rebuild(t, o, sizesAfter(sizes, t.n), nil)
				cs = t.cands(h, &c)
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	if err := w.checkLoads(); err != nil {
		return nil, err
	}
	if m.Stash != 0 {
		return nil, fmt.Errorf("snapshot %s: %w: a cache has no stash, the file has %d entries in one", r.Path(), ErrCorrupt, m.Stash)
	}
	return t, nil
}
