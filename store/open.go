package store

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/snapshot"
)

// Open restores a store from the snapshot at path, written by Save.
//
// The store gets the snapshot's options and a table of the snapshot's
// size, and every key goes back into the bucket that held it (or the
// stash): the same seed puts it among the same candidates, so the
// restored store's load report equals the saved one. With opts nil the
// snapshot's options are used; otherwise every non-zero field of opts must
// equal the snapshot's (zero fields take the snapshot's value; note that
// the zero Hash is xxhash and the zero Placement one choice, so these two
// can only be checked when set to something else), and a contradiction is
// ErrOptionsMismatch. Entries whose expiry has passed are left out. Open
// decodes the file on the calling goroutine and places the entries on a
// second one, so it keeps two cores busy where it has them.
//
// Errors wrap ErrNotFound, ErrNotSnapshot, ErrCorrupt, ErrNewerVersion,
// ErrTypeMismatch, ErrOptionsMismatch, ErrLocked, or ErrOptions for a
// negative opts.DefaultTTL, and name the file. Open
// never returns a partly restored store: on any error it returns nil, and
// the file is only read.
func Open[K comparable, V any](path string, opts *Options) (*Store[K, V], error) {
	r, err := snapshot.Open(path, 0)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	m := r.Meta()
	if kt, vt := typeName[K](), typeName[V](); m.KeyType != kt || m.ValueType != vt {
		return nil, fmt.Errorf("snapshot %s: %w: the file holds %s → %s, asked for %s → %s",
			path, ErrTypeMismatch, m.KeyType, m.ValueType, kt, vt)
	}
	o, err := snapshotOptions(&m, opts)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	s, err := New[K, V](o)
	if err != nil {
		if errors.Is(err, ErrOptions) {
			return nil, fmt.Errorf("snapshot %s: %w: its options are invalid: %v", path, ErrCorrupt, err)
		}
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	if err := checkShape(&m, &s.opts); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	var t *table[K, V]
	if s.cache {
		// A cache's table size follows from its options alone.
		if t = newCacheTable[K, V](&s.opts, s.lay); t.n != m.Buckets {
			return nil, fmt.Errorf("snapshot %s: %w: a cache of %d entries has %d buckets, the file says %d",
				path, ErrCorrupt, s.opts.MaxEntries, t.n, m.Buckets)
		}
		if m.Stash != 0 {
			return nil, fmt.Errorf("snapshot %s: %w: a cache has no stash, the file has %d entries in one", path, ErrCorrupt, m.Stash)
		}
	} else {
		t = newTable[K, V](&s.opts, m.Buckets, s.lay, true)
	}
	rs := restorer[K, V]{s: s, t: t, dec: snapshot.NewDecoder[K, V](), now: s.nowNanosAny()}
	if err := rs.run(r); err != nil {
		return nil, err // named by the restorer or the reader
	}
	if rs.expired == 0 {
		if err := checkLoads(t, &m); err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", path, err)
		}
	}
	s.tabs.Store(&tables[K, V]{cur: t})
	if !s.cache {
		s.count.Store(t.entries)
	}
	return s, nil
}

// snapshotOptions returns the options recorded in m, checked against the
// non-zero fields of given.
func snapshotOptions(m *snapshot.Meta, given *Options) (Options, error) {
	rule, err := bucket.ParsePlacement(m.Placement)
	if err != nil {
		return Options{}, fmt.Errorf("%w: placement: %v", ErrCorrupt, err)
	}
	kind, err := hashfn.ParseKind(m.Hash)
	if err != nil {
		return Options{}, fmt.Errorf("%w: hash: %v", ErrCorrupt, err)
	}
	if m.Seed == 0 || m.Choices < 1 || m.BucketSize < 1 {
		return Options{}, fmt.Errorf("%w: seed %d, choices %d, bucket size %d", ErrCorrupt, m.Seed, m.Choices, m.BucketSize)
	}
	o := Options{MaxEntries: m.MaxEntries, Placement: rule, Choices: m.Choices, BucketSize: m.BucketSize, Hash: kind, Seed: m.Seed}
	if given == nil {
		return o, nil
	}
	// What a process chooses for itself, not the file: the clock that
	// expiries are read by, and the TTL of its own Sets. A TTL that New
	// would refuse is checked here, so that it is reported as the
	// caller's mistake and not as a corrupt file (see the New error in
	// Open, which blames the file's options).
	o.Clock, o.DefaultTTL = given.Clock, given.DefaultTTL
	switch {
	case given.DefaultTTL < 0:
		return Options{}, fmt.Errorf("%w: DefaultTTL %v is negative", ErrOptions, given.DefaultTTL)
	case given.DefaultTTL > 0 && o.MaxEntries == 0:
		return Options{}, fmt.Errorf("%w: DefaultTTL %v needs a bounded store, and the file holds an unbounded one", ErrOptionsMismatch, given.DefaultTTL)
	}
	var diff []string
	check := func(name string, set bool, g, f any) {
		if set && g != f {
			diff = append(diff, fmt.Sprintf("%s %v (the file has %v)", name, g, f))
		}
	}
	check("MaxEntries", given.MaxEntries != 0, given.MaxEntries, o.MaxEntries)
	check("Placement", given.Placement != 0, given.Placement, o.Placement)
	check("Choices", given.Choices != 0, given.Choices, o.Choices)
	check("BucketSize", given.BucketSize != 0, given.BucketSize, o.BucketSize)
	check("Hash", given.Hash != 0, given.Hash, o.Hash)
	check("Seed", given.Seed != 0, given.Seed, o.Seed)
	if diff != nil {
		return Options{}, fmt.Errorf("%w: %s", ErrOptionsMismatch, strings.Join(diff, ", "))
	}
	return o, nil
}

// checkShape checks the table size and histogram of m against each other
// and the options, before Open allocates a table of that size: the
// metadata is not covered by the records' checksum, and a flipped bit in
// the table size must not become a huge allocation.
func checkShape(m *snapshot.Meta, o *Options) error {
	if m.Buckets == 0 || m.Buckets > hashfn.MaxBuckets {
		return fmt.Errorf("%w: table size %d", ErrCorrupt, m.Buckets)
	}
	if _, err := o.Placement.Generator(m.Buckets, o.Choices); err != nil {
		return fmt.Errorf("%w: table size %d: %v", ErrCorrupt, m.Buckets, err)
	}
	if len(m.Histogram) != o.Placement.Parts(o.Choices) {
		return fmt.Errorf("%w: histogram of %d parts", ErrCorrupt, len(m.Histogram))
	}
	var buckets, keys uint64
	for _, part := range m.Histogram {
		if len(part) != o.BucketSize+1 {
			return fmt.Errorf("%w: histogram row of %d loads", ErrCorrupt, len(part))
		}
		for k, c := range part {
			buckets += c
			keys += uint64(k) * c
		}
	}
	if buckets != m.Buckets || keys+m.Stash != m.Entries || m.Stash > m.Entries {
		return fmt.Errorf("%w: the histogram (%d buckets, %d keys) disagrees with the table size %d, %d entries and stash %d",
			ErrCorrupt, buckets, keys, m.Buckets, m.Entries, m.Stash)
	}
	return nil
}

// checkLoads compares the restored table with the histogram and stash
// size of m.
func checkLoads[K comparable, V any](t *table[K, V], m *snapshot.Meta) error {
	got := make([][]uint64, len(m.Histogram))
	for p := range got {
		got[p] = make([]uint64, t.size+1)
	}
	for i := range t.n {
		got[t.gen.PartOf(i)][t.load(i)]++
	}
	for p := range got {
		if !slices.Equal(got[p], m.Histogram[p]) {
			return fmt.Errorf("%w: part %d: the records give loads %v, the metadata %v", ErrCorrupt, p, got[p], m.Histogram[p])
		}
	}
	if n := uint64(t.stash.len()); n != m.Stash {
		return fmt.Errorf("%w: %d records in the stash, the metadata says %d", ErrCorrupt, n, m.Stash)
	}
	return nil
}
