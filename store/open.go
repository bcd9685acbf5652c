package store

import (
	"errors"
	"fmt"
	"reflect"
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
// snapshot's options are used; otherwise every non-zero field of opts
// among MaxEntries, Placement, Choices, BucketSize, Hash and Seed must
// equal the snapshot's (zero fields take the snapshot's value; note that
// the zero Hash is xxhash and the zero Placement one choice, so these two
// can only be checked when set to something else), and a contradiction is
// ErrOptionsMismatch. Clock, DefaultTTL and Growth are not in the file:
// they are taken from opts (a DefaultTTL needs a bounded snapshot, a
// Growth an unbounded one); a restored table grows by opts's Growth from
// its saved size. Entries whose
// expiry has passed are left out. Open decodes the file on the calling
// goroutine and places the entries on a second one, so it keeps two cores
// busy where it has them.
//
// Options.SizeHint is honoured as New honours it: if the snapshot's
// table is smaller than the one the hint asks for, the keys are set
// afresh into a table of the hint's size, so a restored store that is to
// take more keys does not grow on the way. Its load report is then that
// of its keys set afresh, as below. A hint the snapshot's table already
// meets changes nothing, and Clear goes back to the hint's size. A
// SizeHint with a bounded snapshot is ErrOptionsMismatch.
//
// One exception to "the same buckets": a table much larger than its
// entries need (more than 4 times, and over 64 MiB; a store's table never
// shrinks, so a store that grew and then lost most of its keys is saved
// that way, and a doctored file may claim one) is not allocated. Its
// records are still checked against it, and the keys are set afresh into
// a table sized for their number, so the restored store's load report is
// that of its keys set afresh (see restore_sparse.go).
//
// A cache's table is allocated whole, as New allocates it, and its size
// follows from the bound the file records: a nearly empty cache of 2^28
// entries is a file of kilobytes, as is a doctored file that claims that
// bound, and the two cannot be told apart before the table is needed.
// So a cache saved holding fewer than a quarter of its MaxEntries, whose
// table takes over 64 MiB, is restored only when opts.MaxEntries names
// its bound: the caller then asks for that memory as it would ask New.
// Without it Open fails with ErrOptions, which says so, having allocated
// nothing. A cache saved at least a quarter full, or small, needs no
// option. What Open allocates before the records are checked thus grows
// with the entries the file claims, which its size bounds (a file of s
// bytes claims at most s/24), and not with the table size or the bound it
// claims, unless the caller asked for them.
//
// K and V must be the types the snapshot was saved from: the same names
// (reflect's String, without the package path; inside a generic type's
// brackets, where reflect writes paths and the counters of types declared
// in functions, without those either) and the same shapes, as
// the file records them (internal/snapshot's TypeDesc: kinds, named
// types' names, element, key and pointer types, array lengths, and the
// fields msgpack writes, in order, with their names and codec or json
// tags). Another shape of the same name, such as another program's
// main.Item, or a struct whose fields changed since the save, is
// ErrTypeMismatch, saying what differs, before any record is read;
// msgpack would otherwise have decoded the records into it as it could,
// with zero, truncated or converted values. The same shape under the same
// name restores, from whatever package path. Snapshots saved before
// shapes were recorded are checked by name alone.
//
// Errors wrap ErrNotFound, ErrNotSnapshot, ErrCorrupt, ErrNewerVersion,
// ErrTypeMismatch, ErrOptionsMismatch, ErrLocked, ErrRead (the file
// cannot be opened or read), or ErrOptions for a negative
// opts.DefaultTTL, an opts.SizeHint or Growth that New would refuse, or a
// large cache whose bound opts does not name (above), and name
// the file. Open never returns a partly restored store: on any error it
// returns nil, and the file is only read.
func Open[K comparable, V any](path string, opts *Options) (*Store[K, V], error) {
	r, err := snapshot.Open(path, 0)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	m := r.Meta()
	if err := checkTypes[K, V](&m); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	o, err := snapshotOptions(&m, opts)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	if err := checkCacheBound[K, V](&m, o, opts); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	// New makes the smallest table, which Open replaces; the hint is
	// the store's from here on, for Clear.
	hint := o.SizeHint
	o.SizeHint = 0
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
	s.opts.SizeHint = hint
	var t *table[K, V]
	// afresh: the size of the table the keys are set into afresh (a
	// sparse snapshot's, or one smaller than the hint asks for), or 0 to
	// restore the file's table in place.
	var afresh uint64
	if !s.cache {
		hinted := hint > 0 && tableFor(&s.opts, uint64(hint)) > m.Buckets
		if hinted || isSparse[K, V](&s.opts, &m) {
			afresh = tableFor(&s.opts, max(m.Entries, uint64(hint)))
		}
	}
	switch {
	case s.cache:
		// A cache's table size follows from its options alone, and New
		// has made the table (empty): the records go into it.
		if t = s.tabs.Load().cur; t.n != m.Buckets {
			return nil, fmt.Errorf("snapshot %s: %w: a cache of %d entries has %d buckets, the file says %d",
				path, ErrCorrupt, s.opts.MaxEntries, t.n, m.Buckets)
		}
		if m.Stash != 0 {
			return nil, fmt.Errorf("snapshot %s: %w: a cache has no stash, the file has %d entries in one", path, ErrCorrupt, m.Stash)
		}
	case afresh != 0:
		// Far larger than its entries (not allocated), or smaller than
		// the hint: set afresh (restore_sparse.go).
		if t, err = restoreSparse(s, r, &m, afresh); err != nil {
			return nil, err
		}
	default:
		t = newTable[K, V](&s.opts, m.Buckets, s.lay, true)
	}
	if afresh == 0 {
		rs := restorer[K, V]{s: s, t: t, dec: snapshot.NewDecoder[K, V](), now: s.nowNanosAny()}
		if err := rs.run(r); err != nil {
			return nil, err // named by the restorer or the reader
		}
		if rs.expired == 0 {
			if err := checkLoads(t, &m); err != nil {
				return nil, fmt.Errorf("snapshot %s: %w", path, err)
			}
		}
	}
	s.tabs.Store(&tables[K, V]{cur: t})
	if !s.cache {
		s.count.Store(t.entries)
	}
	return s, nil
}

// checkTypes checks that the snapshot m holds keys K and values V: of
// the same names and, where the file records them, the same shapes
// (snapshot.TypeDesc). A file written before shapes were recorded is
// checked by name alone.
func checkTypes[K comparable, V any](m *snapshot.Meta) error {
	if kt, vt := typeName[K](), typeName[V](); !snapshot.SameTypeName(m.KeyType, kt) || !snapshot.SameTypeName(m.ValueType, vt) {
		return fmt.Errorf("%w: the file holds %s → %s, asked for %s → %s", ErrTypeMismatch, m.KeyType, m.ValueType, kt, vt)
	}
	for _, c := range [2]struct {
		what, name string
		file, here *snapshot.TypeDesc
	}{
		{"key", m.KeyType, m.KeyDesc, snapshot.Describe(reflect.TypeFor[K]())},
		{"value", m.ValueType, m.ValueDesc, snapshot.Describe(reflect.TypeFor[V]())},
	} {
		if c.file == nil {
			continue
		}
		d := snapshot.Diff(c.file, c.here)
		if d == "" {
			continue
		}
		// Both whole shapes, unless the difference is at the top, where
		// Diff has given them already.
		if whole := c.file.String(); !strings.HasPrefix(d, whole) {
			d += fmt.Sprintf(" (the file: %s; here: %s)", whole, c.here)
		}
		return fmt.Errorf("%w: %s type %s has another shape than the file's: %s", ErrTypeMismatch, c.what, c.name, cutShape(d))
	}
	return nil
}

// cutShape cuts the account of a difference in shapes to at most 4000
// bytes: a doctored file may describe a type of megabytes.
func cutShape(s string) string {
	const most = 4000
	if len(s) <= most {
		return s
	}
	return strings.ToValidUTF8(s[:most], "") + fmt.Sprintf("… (%d bytes)", len(s))
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
	case given.SizeHint < 0:
		return Options{}, fmt.Errorf("%w: SizeHint %d is negative", ErrOptions, given.SizeHint)
	case given.SizeHint > MaxSizeHint:
		return Options{}, fmt.Errorf("%w: SizeHint %d is above MaxSizeHint (%d)", ErrOptions, given.SizeHint, MaxSizeHint)
	case given.SizeHint > 0 && o.MaxEntries > 0:
		return Options{}, fmt.Errorf("%w: SizeHint is for unbounded stores, and the file holds a cache of %d entries", ErrOptionsMismatch, o.MaxEntries)
	case given.Growth != 0 && o.MaxEntries > 0:
		return Options{}, fmt.Errorf("%w: Growth is for unbounded stores, and the file holds a cache of %d entries", ErrOptionsMismatch, o.MaxEntries)
	}
	if err := checkGrowth(given.Growth); err != nil {
		return Options{}, err
	}
	o.SizeHint, o.Growth = given.SizeHint, given.Growth
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

// checkShape checks the table size and histogram of m against the
// options, before Open allocates a table of that size. The snapshot
// reader has checked the metadata's claims against each other and the
// file (the histogram counts the table's buckets and the entries, the
// table is at most hashfn.MaxBuckets, the entries fit in the file); what
// is left is what the store's options add: a size the rule accepts, and a
// histogram of one part per part of the rule, of loads 0 to the most
// slots a bucket has (histogramLoads).
func checkShape(m *snapshot.Meta, o *Options) error {
	if _, err := o.Placement.Generator(m.Buckets, o.Choices); err != nil {
		return fmt.Errorf("%w: table size %d: %v", ErrCorrupt, m.Buckets, err)
	}
	if len(m.Histogram) != o.Placement.Parts(o.Choices) {
		return fmt.Errorf("%w: histogram of %d parts", ErrCorrupt, len(m.Histogram))
	}
	for _, part := range m.Histogram {
		if len(part) != histogramLoads(o) {
			return fmt.Errorf("%w: histogram row of %d loads", ErrCorrupt, len(part))
		}
	}
	return nil
}

// The snapshot format's bucket size bound is the store's.
var _ [snapshot.MaxBucketSize - slotsPerBucket]struct{}
var _ [slotsPerBucket - snapshot.MaxBucketSize]struct{}

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
