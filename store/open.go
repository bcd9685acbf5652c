package store

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/snapshot"
)

// OpenMap restores a map from the snapshot at path, written by Map.Save.
//
// The map gets the snapshot's options and a table of the snapshot's size,
// and every key goes back into the bucket that held it (or the stash):
// the same seed puts it among the same candidates, so the restored map's
// load report equals the saved one. With opts nil the snapshot's options
// are used; otherwise every non-zero field of opts among Placement,
// Choices, BucketSize, Hash and Seed must equal the snapshot's (the zero
// Hash is xxhash, so that one can only be checked when set to another
// family), and a contradiction is ErrOptionsMismatch. SizeHint and Growth
// are not in the file: they are taken from opts, and a restored table
// grows by opts's Growth from its saved size. OpenMap decodes the file on
// the calling goroutine and places the entries on a second one, so it
// keeps two cores busy where it has them.
//
// MapOptions.SizeHint is honoured as NewMap honours it: if the snapshot's
// table is smaller than the one the hint asks for, the keys are set afresh
// into a table of the hint's size. Its load report is then that of its
// keys set afresh, as below. A hint the snapshot's table already meets
// changes nothing, and Clear goes back to the hint's size.
//
// One exception to "the same buckets": a table much larger than its
// entries need (more than 4 times, and over 64 MiB; a map's table never
// shrinks, so a map that grew and then lost most of its keys is saved that
// way, and a doctored file may claim one) is not allocated. Its records
// are still checked against it, and the keys are set afresh into a table
// sized for their number (see restore_sparse.go).
//
// K and V must be the types the snapshot was saved from: the same names
// (reflect's String, without the package path; inside a generic type's
// brackets, where reflect writes paths and the counters of types declared
// in functions, without those either) and the same shapes, as the file
// records them (internal/snapshot's TypeDesc: kinds, named types' names,
// element, key and pointer types, array lengths, and the fields msgpack
// writes, in order, with their names and codec or json tags). Another
// shape of the same name, such as another program's main.Item, or a struct
// whose fields changed since the save, is ErrTypeMismatch, saying what
// differs, before any record is read. The same shape under the same name
// restores, from whatever package path. Snapshots saved before shapes were
// recorded are checked by name alone.
//
// A snapshot of a cache is ErrOptionsMismatch: OpenCache restores it.
// Errors wrap ErrNotFound, ErrNotSnapshot, ErrCorrupt, ErrNewerVersion,
// ErrTypeMismatch, ErrOptionsMismatch, ErrLocked, ErrRead (the file cannot
// be opened or read), or ErrOptions for options NewMap would refuse, and
// name the file. OpenMap never returns a partly restored map: on any error
// it returns nil, and the file is only read.
func OpenMap[K comparable, V any](path string, opts *MapOptions) (*Map[K, V], error) {
	r, m, err := openSnapshot[K, V](path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if m.MaxEntries > 0 {
		return nil, fmt.Errorf("snapshot %s: %w: the file holds a cache of %d entries: open it with OpenCache", path, ErrOptionsMismatch, m.MaxEntries)
	}
	var given *config
	if opts != nil {
		if _, err := opts.resolve(); err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", path, err)
		}
		c := opts.config()
		given = &c
	}
	o, err := snapshotOptions(&m, given)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	// newMap makes the smallest table, which OpenMap replaces; the hint
	// is the map's from here on, for Clear.
	hint := o.SizeHint
	o.SizeHint = 0
	if o.Growth == 0 {
		o.Growth = DefaultGrowth
	}
	if err := checkFileOptions(&o, &m); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	s := newMap[K, V](o)
	s.cfg.SizeHint = hint
	var t *table[K, V]
	hinted := hint > 0 && tableFor(&s.cfg, uint64(hint)) > m.Buckets
	if hinted || isSparse[K, V](&s.cfg, &m) {
		// Far larger than its entries (not allocated), or smaller than
		// the hint: set afresh (restore_sparse.go).
		if t, err = restoreSparse(s, r, &m, tableFor(&s.cfg, max(m.Entries, uint64(hint)))); err != nil {
			return nil, err
		}
	} else {
		t = newTable[K, V](&s.cfg, m.Buckets, s.lay, true)
		if err := restoreInPlace[K, V](r, &m, t, nowOf(&s.cfg)); err != nil {
			return nil, err
		}
	}
	s.tabs.Store(&tables[K, V]{cur: t})
	s.count.Store(t.entries.Load())
	return s, nil
}

// OpenCache restores a cache from the snapshot at path, written by
// Cache.Save, as OpenMap restores a map: every entry goes back into the
// bucket that held it, with its expiry, and the entries whose expiry has
// passed (by opts's Clock, or the system clock) are left out. The cache's
// bound and its durations (DefaultTTL, ExpireAfterAccess, RefreshAfter)
// and its weight bound come from the file; a non-zero opts.MaxEntries must
// equal the file's, and a non-zero opts.MaxWeight replaces the file's.
// The kind of expiry is replaced as a whole: if opts sets DefaultTTL,
// ExpireAfterAccess or ExpiryCalculator, the file's DefaultTTL and
// ExpireAfterAccess are dropped for opts's. A non-zero opts.RefreshAfter
// replaces the file's. Functions are not saved: OnDeletion,
// ExpiryCalculator and Weigher come from opts. A cache bounded by weight
// needs its Weigher: OpenCache weighs every restored entry with it and,
// if they weigh more than MaxWeight, evicts by the policy until they fit
// (unreported: OnDeletion is the cache's once OpenCache returns). The
// eviction policy's history is not saved: the restored entries start as
// if each had been used once a capacity ago; nor are the entries' write
// times: under RefreshAfter, the restored entries count as written when
// the file is opened.
//
// The table is the one the cache had when it was saved (one of the sizes
// its table grows through, up to the final one), unless that table is
// more than four times the one its entries need and over 64 MiB: a cache
// that filled and then lost most of its entries, or a doctored file that
// claims a bound of 2^28 beside a handful of records. Its entries then go
// into the table that holds them, placed as Set would place them, as
// OpenMap restores a sparse map: what OpenCache allocates follows the
// entries the file holds, and the restored cache grows from there.
//
// A snapshot of a map is ErrOptionsMismatch: OpenMap restores it. Other
// errors are those of OpenMap.
func OpenCache[K comparable, V any](path string, opts *CacheOptions[K, V]) (*Cache[K, V], error) {
	r, m, err := openSnapshot[K, V](path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if m.MaxEntries == 0 {
		return nil, fmt.Errorf("snapshot %s: %w: the file holds a map (unbounded): open it with OpenMap", path, ErrOptionsMismatch)
	}
	var (
		given   *config
		weigher func(K, V) uint32
	)
	if opts != nil {
		if err := opts.checkExpiry(); err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", path, err)
		}
		for _, d := range []struct {
			name string
			v    time.Duration
		}{{"DefaultTTL", opts.DefaultTTL}, {"ExpireAfterAccess", opts.ExpireAfterAccess}, {"RefreshAfter", opts.RefreshAfter}} {
			if d.v < 0 {
				return nil, fmt.Errorf("snapshot %s: %w: %s %v is negative", path, ErrOptions, d.name, d.v)
			}
		}
		if opts.DefaultTTL > 0 && opts.ExpireAfterAccess > 0 {
			return nil, fmt.Errorf("snapshot %s: %w: DefaultTTL %v and ExpireAfterAccess %v (expiry after write or after access: set one)",
				path, ErrOptions, opts.DefaultTTL, opts.ExpireAfterAccess)
		}
		if opts.MaxWeight > math.MaxInt64 {
			return nil, fmt.Errorf("snapshot %s: %w: MaxWeight %d is above %d", path, ErrOptions, opts.MaxWeight, int64(math.MaxInt64))
		}
		if _, err := rankingIndex(opts.Ranking); err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", path, err)
		}
		c := opts.config()
		given = &c
		weigher = opts.Weigher
		if opts.ExpiryCalculator != nil {
			// The calculator replaces the file's kind of expiry; a
			// config has no field for it, so say so with a mark the
			// options code below understands.
			c.DefaultTTL, c.ExpireAfterAccess = 0, -1
		}
	}
	o, err := snapshotOptions(&m, given)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	switch {
	case o.MaxWeight > 0 && weigher == nil:
		return nil, fmt.Errorf("snapshot %s: %w: the cache is bounded by weight (MaxWeight %d): give its Weigher in the options", path, ErrOptions, o.MaxWeight)
	case o.MaxWeight == 0 && weigher != nil:
		return nil, fmt.Errorf("snapshot %s: %w: a Weigher without MaxWeight bounds nothing", path, ErrOptions)
	}
	if err := checkFileOptions(&o, &m); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	// A cache's table sizes follow from its options alone: the file's
	// must be one of them.
	if sizes := cacheSizes(&o); !slices.Contains(sizes, m.Buckets) {
		return nil, fmt.Errorf("snapshot %s: %w: a cache of %d entries has tables of %d to %d buckets, the file says %d",
			path, ErrCorrupt, o.MaxEntries, sizes[0], sizes[len(sizes)-1], m.Buckets)
	}
	if m.Stash != 0 {
		return nil, fmt.Errorf("snapshot %s: %w: a cache has no stash, the file has %d entries in one", path, ErrCorrupt, m.Stash)
	}
	s := newCache[K, V](o, weigher)
	var t *cacheTable[K, V]
	if isSparseCache[K, V](&s.cfg, &m) {
		if t, err = restoreCacheSparse(s, r, &m); err != nil {
			return nil, err
		}
	} else {
		t = s.newTable(&s.cfg, m.Buckets)
		if err := restoreInPlace[K, V](r, &m, cacheRestore[K, V]{t, s}, s.nowNanos()); err != nil {
			return nil, err
		}
	}
	s.tab.Store(t)
	if s.wsum != nil {
		s.weighAll(t)
	}
	if opts != nil {
		s.useFuncs(opts)
		s.rec = opts.StatsRecorder
	}
	if t.live.Load() > t.growAt {
		s.grow(t) // saved by a Set about to grow it
	}
	return s, nil
}

// openSnapshot opens the snapshot at path and checks that it holds keys K
// and values V. The caller closes the reader.
func openSnapshot[K comparable, V any](path string) (*snapshot.Reader, snapshot.Meta, error) {
	r, err := snapshot.Open(path, 0)
	if err != nil {
		return nil, snapshot.Meta{}, err
	}
	m := r.Meta()
	if err := checkTypes[K, V](&m); err != nil {
		r.Close()
		return nil, m, fmt.Errorf("snapshot %s: %w", path, err)
	}
	return r, m, nil
}

// checkFileOptions checks the options taken from the file m, resolved as
// the constructors would, and its shape against them.
func checkFileOptions(o *config, m *snapshot.Meta) error {
	var err error
	if o.MaxEntries > 0 {
		_, err = resolveCache(*o)
	} else {
		_, err = o.mapOptions().resolve()
	}
	if err != nil {
		if errors.Is(err, ErrOptions) {
			return fmt.Errorf("%w: its options are invalid: %v", ErrCorrupt, err)
		}
		return err
	}
	return checkShape(m, o)
}

// restoreInPlace places the records of r into t, where they were, and
// checks the loads against the metadata m. now is the time by which
// expired entries are left out.
func restoreInPlace[K comparable, V any](r *snapshot.Reader, m *snapshot.Meta, t restoreTarget[K, V], now int64) error {
	rs := restorer[K, V]{t: t, dec: snapshot.NewDecoder[K, V](), now: now}
	if err := rs.run(r); err != nil {
		return err // named by the restorer or the reader
	}
	if rs.expired == 0 {
		if err := checkLoads[K, V](t, m); err != nil {
			return fmt.Errorf("snapshot %s: %w", r.Path(), err)
		}
	}
	return nil
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
// non-zero fields of given (nil: none given).
func snapshotOptions(m *snapshot.Meta, given *config) (config, error) {
	rule, err := bucket.ParsePlacement(m.Placement)
	if err != nil {
		return config{}, fmt.Errorf("%w: placement: %v", ErrCorrupt, err)
	}
	kind, err := hashfn.ParseKind(m.Hash)
	if err != nil {
		return config{}, fmt.Errorf("%w: hash: %v", ErrCorrupt, err)
	}
	if m.Seed == 0 || m.Choices < 1 || m.BucketSize < 1 || rule == bucket.Default {
		return config{}, fmt.Errorf("%w: placement %s, seed %d, choices %d, bucket size %d", ErrCorrupt, m.Placement, m.Seed, m.Choices, m.BucketSize)
	}
	o := config{MaxEntries: m.MaxEntries, MaxWeight: m.MaxWeight, DefaultTTL: time.Duration(m.DefaultTTL), ExpireAfterAccess: time.Duration(m.ExpireAfterAccess),
		RefreshAfter: time.Duration(m.RefreshAfter), Placement: rule, Choices: m.Choices,
		BucketSize: m.BucketSize, Hash: kind, Seed: m.Seed}
	if given == nil {
		return o, nil
	}
	// What a process chooses for itself, not the file: the clock that
	// expiries are read by, a map's growth, and a cache's TTL when given.
	// So is a cache's pinned ranking.
	o.Clock, o.SizeHint, o.Growth, o.Ranking = given.Clock, given.SizeHint, given.Growth, given.Ranking
	// The kind of expiry as a whole: ExpireAfterAccess < 0 marks an
	// ExpiryCalculator given to OpenCache, which replaces both.
	if given.DefaultTTL != 0 || given.ExpireAfterAccess != 0 {
		o.DefaultTTL, o.ExpireAfterAccess = given.DefaultTTL, max(given.ExpireAfterAccess, 0)
	}
	if given.RefreshAfter != 0 {
		o.RefreshAfter = given.RefreshAfter
	}
	if given.MaxWeight != 0 {
		o.MaxWeight = given.MaxWeight
	}
	var diff []string
	check := func(name string, set bool, g, f any) {
		if set && g != f {
			diff = append(diff, fmt.Sprintf("%s %v (the file has %v)", name, g, f))
		}
	}
	check("MaxEntries", given.MaxEntries != 0, given.MaxEntries, o.MaxEntries)
	check("Placement", given.Placement != bucket.Default, given.Placement, o.Placement)
	check("Choices", given.Choices != 0, given.Choices, o.Choices)
	check("BucketSize", given.BucketSize != 0, given.BucketSize, o.BucketSize)
	check("Hash", given.Hash != 0, given.Hash, o.Hash)
	check("Seed", given.Seed != 0, given.Seed, o.Seed)
	if diff != nil {
		return config{}, fmt.Errorf("%w: %s", ErrOptionsMismatch, strings.Join(diff, ", "))
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
func checkShape(m *snapshot.Meta, o *config) error {
	if _, err := o.Placement.Generator(m.Buckets, o.Choices); err != nil {
		return fmt.Errorf("%w: table size %d: %v", ErrCorrupt, m.Buckets, err)
	}
	if len(m.Histogram) != o.Placement.Parts(o.Choices) {
		return fmt.Errorf("%w: histogram of %d parts", ErrCorrupt, len(m.Histogram))
	}
	for _, part := range m.Histogram {
		if len(part) != histogramLoads(o, m.Buckets) {
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
func checkLoads[K comparable, V any](t visited[K, V], m *snapshot.Meta) error {
	g := t.geom()
	got := make([][]uint64, len(m.Histogram))
	for p := range got {
		got[p] = make([]uint64, g.size+1)
	}
	for i := range g.n {
		got[g.gen.PartOf(i)][t.load(i)]++
	}
	for p := range got {
		if !slices.Equal(got[p], m.Histogram[p]) {
			return fmt.Errorf("%w: part %d: the records give loads %v, the metadata %v", ErrCorrupt, p, got[p], m.Histogram[p])
		}
	}
	if n := uint64(t.stashLen()); n != m.Stash {
		return fmt.Errorf("%w: %d records in the stash, the metadata says %d", ErrCorrupt, n, m.Stash)
	}
	return nil
}
