package store

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

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
// ErrOptionsMismatch. Entries whose expiry has passed are left out.
//
// Errors wrap ErrNotFound, ErrNotSnapshot, ErrCorrupt, ErrNewerVersion,
// ErrTypeMismatch, ErrOptionsMismatch or ErrLocked, and name the file. Open
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
	err = r.ForEach(func(rec []byte) error {
		if err := rs.add(rec); err != nil {
			return fmt.Errorf("snapshot %s: record %d: %w", path, rs.n, err)
		}
		return nil
	})
	if err == nil {
		err = rs.flush()
		if err != nil {
			err = fmt.Errorf("snapshot %s: record %d: %w", path, rs.n, err)
		}
	}
	if err != nil {
		return nil, err
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
	// expiries are read by, and the TTL of its own Sets.
	o.Clock, o.DefaultTTL = given.Clock, given.DefaultTTL
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

// restorer puts records back into a table, in batches: it decodes
// restoreBatch records, then loads the control words of all their
// candidates (independent loads, so their cache misses overlap, as in
// insertBatch), then checks and places each record in turn.
type restorer[K comparable, V any] struct {
	s       *Store[K, V]
	t       *table[K, V]
	dec     *snapshot.Decoder[K, V]
	now     int64
	n       int // records decoded, placed or left out
	expired int // records left out because their expiry passed

	batch [restoreBatch]viewEntry[K, V]
	hs    [restoreBatch]uint64
	nb    int
}

const restoreBatch = 16

// add decodes one record into the batch, and places the batch when full.
func (rs *restorer[K, V]) add(rec []byte) error {
	k, v, expiry, bi, err := rs.dec.DecodeRecord(rec)
	if err != nil {
		return err
	}
	if expiry != 0 && expiry <= rs.now {
		rs.expired++
		rs.n++
		return nil
	}
	rs.batch[rs.nb] = viewEntry[K, V]{key: k, val: v, expiry: expiry, bucket: bi}
	rs.nb++
	if rs.nb == restoreBatch {
		return rs.flush()
	}
	return nil
}

// sink keeps the touching loads of flush from being optimized away.
var sink atomic.Uint64

// flush places the records of the batch.
func (rs *restorer[K, V]) flush() error {
	t := rs.t
	var touch uint64
	for x := range rs.nb {
		h := rs.s.hash(rs.batch[x].key)
		rs.hs[x] = h
		var c [hashfn.MaxChoices]uint64
		for _, i := range t.candidates(h, &c) {
			touch += t.bucket(i).ctrl.Load()
		}
	}
	if touch == 1 { // practically never; the store makes the loads count
		sink.Add(touch)
	}
	for x := range rs.nb {
		e := &rs.batch[x]
		if err := rs.place(e.key, e.val, e.expiry, e.bucket, rs.hs[x]); err != nil {
			return err
		}
		rs.n++
	}
	clear(rs.batch[:rs.nb])
	rs.nb = 0
	return nil
}

// place puts a record where it was: in its recorded bucket, which must be
// one of its candidates and have room, or in the stash. A key seen before
// is ErrCorrupt.
func (rs *restorer[K, V]) place(k K, v V, expiry, bi int64, h uint64) error {
	t := rs.t
	tag := tagOf(h)
	var c [hashfn.MaxChoices]uint64
	cs := t.candidates(h, &c)
	for _, i := range cs {
		if t.bucket(i).find(k, tag) >= 0 {
			return fmt.Errorf("%w: key %v twice", ErrCorrupt, k)
		}
	}
	if t.stash.len() > 0 && t.stash.has(k) {
		return fmt.Errorf("%w: key %v twice", ErrCorrupt, k)
	}
	if bi == stashIndex {
		if rs.s.cache {
			return fmt.Errorf("%w: key %v recorded in the stash of a cache, which has none", ErrCorrupt, k)
		}
		t.stash.put(k, v)
		t.bucket(cs[0]).sync.addHint(+1)
		t.entries++
		return nil
	}
	if bi < 0 || uint64(bi) >= t.n || !slices.Contains(cs, uint64(bi)) {
		return fmt.Errorf("%w: key %v recorded in bucket %d, not one of its candidates %v (a different hash or seed?)", ErrCorrupt, k, bi, cs)
	}
	b := t.bucket(uint64(bi))
	capMask := t.capMask
	if rs.s.cache {
		capMask = t.capAt(uint64(bi))
	}
	e := ctrl(b.ctrl.Load()).empty(capMask)
	if e == 0 {
		return fmt.Errorf("%w: bucket %d holds more than %d records", ErrCorrupt, bi, slotsOf(capMask))
	}
	j := slotOf(e)
	b.put(j, k, v, tag, t.lay)
	t.entries++
	if rs.s.cache {
		// As a new entry of a cache (setCache): its expiry and an insert
		// at the clock's start with no hits
		// (the policy's recency and frequency are not saved).
		s := rs.s
		m := &t.meta[bi]
		m.exp[j].Store(expiry)
		if expiry != 0 && !s.ttl.Load() {
			s.ttl.Store(true) // Gets read expiries only once some entry has one
		}
		m.acc[j].Store(inserted(s.ticks.now(0), 0, s.sk.gen.Load()))
		t.live.Add(1)
	}
	return nil
}
