package store

import (
	"fmt"
	"reflect"

	"github.com/twochoice/twochoice/internal/snapshot"
)

// Sparse snapshots.
//
// An unbounded store's table never shrinks (only Clear starts it afresh),
// so a store that grew to hold many keys and then lost most of them is
// saved with a table far larger than its entries: a snapshot may describe
// up to 2^32 buckets beside a handful of records, and a doctored file may
// claim as much. The reader bounds the entries by the file's size
// (snapshot.Meta's checks), but nothing in the file bounds the table, and
// restoring in place allocates all of it before the records can be checked
// against it: a file of kilobytes could cost terabytes.
//
// So Open restores a table in place only while it is at most sparseFactor
// times the table its entries need (tableFor), or takes at most
// sparseFloor bytes. A larger table is restored sparsely: every record is
// still checked against the table the file describes (its bucket is one of
// its key's candidates there and has room, no key twice, the loads agree
// with the histogram and the stash), computing candidates from the table
// size alone and counting loads per bucket named, and the keys are
// inserted afresh into a table of the size their number needs, in the
// file's order, as Set would place them. Memory then follows the entries,
// which the file's size bounds, and not the table size it claims; the
// price is that such a store's load report is that of its keys set afresh,
// not the saved one.

// sparseFactor: a table more than this many times the size its entries
// need, and over sparseFloor bytes, is restored sparsely (and a cache of
// more than this many times its entries needs its bound in the options).
// A store that only grew is at most the size its entries need; this
// leaves room for one that lost up to about three quarters of its keys.
const sparseFactor = 4

// sparseFloor: a table of at most this many bytes is always restored in
// place, and a cache's of at most this many restored without its bound in
// the options (restore_cache.go). A variable so that tests can lower it.
var sparseFloor uint64 = 64 << 20

// isSparse reports whether the table m describes is to be restored
// sparsely (see above).
func isSparse[K comparable, V any](o *config, m *snapshot.Meta) bool {
	bucketBytes := uint64(reflect.TypeFor[bucketOf[K, V]]().Size())
	return m.Buckets > sparseFactor*tableFor(o, m.Entries) && m.Buckets > sparseFloor/bucketBytes
}

// restoreSparse reads every record of r, checks it against the table m
// describes, and inserts it into a new table of size buckets (at least
// tableFor m.Entries: OpenMap asks for more when MapOptions.SizeHint does),
// which it returns. Errors name the file.
func restoreSparse[K comparable, V any](s *Map[K, V], r *snapshot.Reader, m *snapshot.Meta, size uint64) (*table[K, V], error) {
	o := &s.cfg
	w, err := newSparseRecords[K, V](r, o, m)
	if err != nil {
		return nil, err
	}
	t := newTable[K, V](o, size, s.lay, true)
	var stash uint64
	err = w.forEach(r, sparseTarget[K, V]{
		hash:  t.hash,
		room:  func(uint64) int { return o.BucketSize },
		stash: func(K) error { stash++; return nil },
		place: func(k K, v V, _ int64, h uint64) error {
			tag := tagOf(h)
			if t.set(k, v, h, tag) {
				return fmt.Errorf("%w: key %v twice", ErrCorrupt, k)
			}
			t.insert(k, v, h, tag)
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	if err := w.checkLoads(); err != nil {
		return nil, err
	}
	if stash != m.Stash {
		return nil, fmt.Errorf("snapshot %s: %w: %d records in the stash, the metadata says %d", r.Path(), ErrCorrupt, stash, m.Stash)
	}
	return t, nil
}
