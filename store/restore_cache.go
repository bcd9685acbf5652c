package store

import (
	"fmt"
	"math/bits"
	"reflect"

	"github.com/twochoice/twochoice/internal/snapshot"
)

// Caches far larger than their entries.
//
// A cache's table is allocated whole, by New and so by Open, and its size
// follows from MaxEntries alone: a snapshot of a cache of 2^28 entries
// that holds a handful is a file of kilobytes, and so is a doctored file
// that claims such a bound. Nothing in the file tells the two apart
// before its records are read, and the table must exist before they are
// placed into it, so Open does not take the bound from the file alone
// when the file does not account for it: a cache whose table takes more
// than sparseFloor bytes and whose bound is more than sparseFactor times
// the entries the file records (which its size bounds: Meta's checks) is
// restored only when the caller names that bound in Options.MaxEntries,
// as it would to New. Otherwise Open fails with ErrOptions, saying so,
// before it allocates anything. What Open allocates for a cache before it
// reads the records thus grows with the entries the file claims, or is
// what the caller asked for.

// checkCacheBound returns an error wrapping ErrOptions if the cache that
// the snapshot m describes, under options o (from snapshotOptions), is
// too large for the entries m records and given does not name its bound
// (see above). It returns nil for options NewCache will refuse: NewCache
// says why.
func checkCacheBound[K comparable, V any](m *snapshot.Meta, o config, given *CacheOptions[K, V]) error {
	if given != nil && given.MaxEntries != 0 {
		return nil // snapshotOptions has checked that given's bound is the file's
	}
	o, err := resolveCache(o)
	if err != nil {
		return nil
	}
	bytes, err := cacheBytes[K, V](&o)
	if err != nil {
		return nil
	}
	if uint64(o.MaxEntries) <= sparseFactor*m.Entries || bytes <= sparseFloor {
		return nil
	}
	return fmt.Errorf("%w: the file holds a cache of %d entries with %d saved; OpenCache allocates a cache's table whole (%d MiB here), which so few entries do not account for: "+
		"to restore it, pass CacheOptions{MaxEntries: %d} to OpenCache", ErrOptions, o.MaxEntries, m.Entries, bytes>>20, o.MaxEntries)
}

// cacheBytes returns the bytes New allocates for the table of a cache of
// options o: its buckets, their expiries and the ghost.
func cacheBytes[K comparable, V any](o *config) (uint64, error) {
	n, _, _, err := cacheSize(o)
	if err != nil {
		return 0, err
	}
	perBucket := uint64(reflect.TypeFor[cacheBucket[K, V]]().Size() + reflect.TypeFor[bucketMeta]().Size())
	// ghost.init: ghostPerEntry 32-bit words per entry, rounded up to a
	// power of two.
	ghostWords := uint64(1) << bits.Len64(uint64(max(ghostPerEntry*o.MaxEntries, 64))-1)
	return n*perBucket + 4*ghostWords, nil
}
