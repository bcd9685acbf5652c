package store

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/snapshot"
)

// restorer puts the records of a snapshot back into a table, for Open.
//
// Decoding a record (msgpack, through reflection) and placing it (a cache
// miss or two on its candidate buckets) take about as long as each other,
// so they run as a pipeline on two goroutines: the caller's goroutine
// walks the file, decodes records and hashes their keys into chunks of
// restoreChunk entries; a placer goroutine checks and places each chunk's
// entries, in the file's order. Open therefore takes about the time of the
// decode alone where a second core is free, and places exactly as a single
// goroutine would: the table, and any error, are the same either way.
//
// The placer loads the control words of a group of restoreGroup entries'
// candidates before it places any of them (independent loads, so their
// cache misses overlap, as in insertBatch).
type restorer[K comparable, V any] struct {
	t    restoreTarget[K, V]
	dec  *snapshot.Decoder[K, V]
	now  int64
	path string // the snapshot's, for the errors of records

	// Owned by the decoding goroutine.
	n       int // records read
	expired int // records left out because their expiry passed
	cur     *restoreChunk[K, V]

	free, full chan *restoreChunk[K, V]
	failed     atomic.Bool // the placer has met an error; stop decoding
	placeErr   error       // the placer's error, read after it has finished
}

const (
	restoreChunkLen = 512 // entries handed from the decoder to the placer at a time
	restoreChunks   = 4   // chunks in flight: the decoder runs this far ahead
	restoreGroup    = 16  // entries whose candidates are loaded together
)

// restoreChunk is a run of decoded entries, with their keys' hashes and
// their record numbers (for error messages).
type restoreChunk[K comparable, V any] struct {
	n   int
	e   [restoreChunkLen]viewEntry[K, V]
	h   [restoreChunkLen]uint64
	rec [restoreChunkLen]int
}

// errPlacerFailed stops the walk of the file once the placer has failed;
// the placer's own error is the one returned.
var errPlacerFailed = errors.New("store: restore stopped")

// run restores every record of r. Errors name the file, and the record
// when one is at fault: the restorer's own as r.ForEach's do (ForEach
// returns its callback's errors as they are).
func (rs *restorer[K, V]) run(r *snapshot.Reader) error {
	rs.path = r.Path()
	rs.free = make(chan *restoreChunk[K, V], restoreChunks)
	rs.full = make(chan *restoreChunk[K, V], restoreChunks)
	for range restoreChunks {
		rs.free <- new(restoreChunk[K, V])
	}
	done := make(chan struct{})
	go rs.placer(done)
	rs.cur = <-rs.free
	err := r.ForEach(rs.add)
	if err == nil && rs.cur.n > 0 {
		rs.full <- rs.cur
	}
	close(rs.full)
	<-done
	if rs.placeErr != nil {
		return rs.placeErr
	}
	return err
}

// add decodes one record into the current chunk, and hands the chunk to
// the placer when it is full.
func (rs *restorer[K, V]) add(rec []byte) error {
	k, v, expiry, bi, err := rs.dec.DecodeRecord(rec)
	if err != nil {
		return fmt.Errorf("snapshot %s: record %d: %w", rs.path, rs.n, err)
	}
	rs.n++
	if expiry != 0 && expiry <= rs.now {
		rs.expired++
		return nil
	}
	c := rs.cur
	c.e[c.n] = viewEntry[K, V]{key: k, val: v, expiry: expiry, bucket: bi}
	c.h[c.n] = rs.t.hashOf(k)
	c.rec[c.n] = rs.n - 1
	c.n++
	if c.n == restoreChunkLen {
		if rs.failed.Load() {
			return errPlacerFailed
		}
		rs.full <- c
		rs.cur = <-rs.free
	}
	return nil
}

// placer places the chunks sent to rs.full until it is closed, then
// closes done. After an error it only returns the chunks.
func (rs *restorer[K, V]) placer(done chan<- struct{}) {
	defer close(done)
	for c := range rs.full {
		if rs.placeErr == nil {
			if err := rs.placeChunk(c); err != nil {
				rs.placeErr = err
				rs.failed.Store(true)
			}
		}
		clear(c.e[:c.n]) // do not keep keys and values alive from here
		c.n = 0
		rs.free <- c
	}
}

// placeChunk places the entries of c, a group at a time.
func (rs *restorer[K, V]) placeChunk(c *restoreChunk[K, V]) error {
	t := rs.t
	g0 := t.geom()
	for g := 0; g < c.n; g += restoreGroup {
		end := min(g+restoreGroup, c.n)
		var touch uint64
		for x := g; x < end; x++ {
			var cs [hashfn.MaxChoices]uint64
			for _, i := range g0.cands(c.h[x], &cs) {
				touch += t.bucket(i).ctrl.Load()
			}
		}
		keep(touch)
		for x := g; x < end; x++ {
			e := &c.e[x]
			if err := t.placeRecord(e.key, e.val, e.expiry, e.bucket, c.h[x]); err != nil {
				return fmt.Errorf("snapshot %s: record %d: %w", rs.path, c.rec[x], err)
			}
		}
	}
	return nil
}

// restoreTarget is a table being restored, as the restorer sees it.
type restoreTarget[K comparable, V any] interface {
	visited[K, V]
	hashOf(k K) uint64
	// placeRecord puts a record where it was: in its recorded bucket
	// bi, which must be one of its candidates and have room, or in the
	// stash (a map's). A key seen before is ErrCorrupt.
	placeRecord(k K, v V, expiry, bi int64, h uint64) error
}

// placeRecord puts a record of a map's snapshot where it was.
func (t *table[K, V]) placeRecord(k K, v V, _, bi int64, h uint64) error {
	tag := tagOf(h)
	var c [hashfn.MaxChoices]uint64
	cs := t.cands(h, &c)
	if err := checkNew(k, tag, cs, t.bucket); err != nil {
		return err
	}
	if t.stash.len() > 0 && t.stash.has(k) {
		return fmt.Errorf("%w: key %v twice", ErrCorrupt, k)
	}
	if bi == stashIndex {
		t.stash.put(k, v)
		t.bucket(cs[0]).sync.addHint(+1)
		t.entries.Add(1)
		return nil
	}
	if err := checkRecordBucket(k, bi, t.n, cs); err != nil {
		return err
	}
	b := t.bucket(uint64(bi))
	e := ctrl(b.ctrl.Load()).empty(t.capMask)
	if e == 0 {
		return fmt.Errorf("%w: bucket %d holds more than %d records", ErrCorrupt, bi, slotsOf(t.capMask))
	}
	b.put(slotOf(e), k, v, tag, t.lay)
	t.entries.Add(1)
	return nil
}

// cacheRestore is a cache's table being restored, with the cache whose
// policy state its entries start with.
type cacheRestore[K comparable, V any] struct {
	*cacheTable[K, V]
	s *Cache[K, V]
}

// placeRecord puts a record of a cache's snapshot where it was, as a new
// entry: with its expiry, and a last use now with a reuse gap of one
// capacity (policy words are not saved; this ranks restored entries with
// the ones used about once a capacity, below those in use since).
func (r cacheRestore[K, V]) placeRecord(k K, v V, expiry, bi int64, h uint64) error {
	t, s := r.cacheTable, r.s
	tag := tagOf(h)
	var c [hashfn.MaxChoices]uint64
	cs := t.cands(h, &c)
	if err := checkNew(k, tag, cs, t.bucket); err != nil {
		return err
	}
	if bi == stashIndex {
		return fmt.Errorf("%w: key %v recorded in the stash of a cache, which has none", ErrCorrupt, k)
	}
	if err := checkRecordBucket(k, bi, t.n, cs); err != nil {
		return err
	}
	i := uint64(bi)
	b := t.bucket(i)
	capMask := t.capAt(i)
	e := ctrl(b.ctrl.Load()).empty(capMask)
	if e == 0 {
		return fmt.Errorf("%w: bucket %d holds more than %d records", ErrCorrupt, bi, slotsOf(capMask))
	}
	j := slotOf(e)
	b.put(j, k, v, tag, t.lay)
	t.meta[i].exp[j].Store(expiry)
	if t.wrote != nil {
		// Write times are not saved: a restored entry counts as
		// written when the snapshot is opened.
		t.stampWrite(i, j, s.nowNanos())
	}
	if expiry != 0 && !s.ttl.Load() {
		s.ttl.Store(true) // Gets read expiries only once some entry has one
	}
	t.cbucket(i).acc[j].Store(packGap(s.tickNow(0), gapCode(uint32(s.cfg.MaxEntries>>s.tq))))
	t.live.Add(1)
	return nil
}

// checkNew returns ErrCorrupt if one of k's candidates cs already holds it.
func checkNew[K comparable, V any](k K, tag uint8, cs []uint64, bucket func(uint64) bref[K, V]) error {
	for _, i := range cs {
		if bucket(i).find(k, tag) >= 0 {
			return fmt.Errorf("%w: key %v twice", ErrCorrupt, k)
		}
	}
	return nil
}

// checkRecordBucket checks that bucket bi, recorded for key k, is in a
// table of n buckets and one of the key's candidates cs there.
func checkRecordBucket[K comparable](k K, bi int64, n uint64, cs []uint64) error {
	if bi < 0 || uint64(bi) >= n || !slices.Contains(cs, uint64(bi)) {
		return fmt.Errorf("%w: key %v recorded in bucket %d, not one of its candidates %v (a different hash or seed?)", ErrCorrupt, k, bi, slices.Clone(cs))
	}
	return nil
}

// sparseRecords walks the records of a snapshot restored sparsely
// (restore_sparse.go, restore_cache.go): it checks each record against the
// table the file describes, which it never allocates, computing
// candidates from the table size alone and counting the loads of the
// buckets records name, and hands the records to the table they go into.
type sparseRecords[K comparable, V any] struct {
	path  string
	o     *config
	m     *snapshot.Meta
	gen   hashfn.Generator
	now   int64
	loads map[uint64]uint8 // the loads of the file's buckets that records name
}

// sparseTarget is what a sparse restore does with the records it walks.
type sparseTarget[K comparable, V any] struct {
	hash func(K) uint64
	// room is the most records bucket bi of the file's table holds.
	room func(bi uint64) int
	// stash judges a record in the stash.
	stash func(K) error
	// place puts a record that has not expired into the new table.
	place func(k K, v V, expiry int64, h uint64) error
}

// newSparseRecords returns the walk of the records of r, whose metadata is
// m, for a store with options o.
func newSparseRecords[K comparable, V any](r *snapshot.Reader, o *config, m *snapshot.Meta) (*sparseRecords[K, V], error) {
	// checkShape has checked that the rule accepts the size.
	gen, err := o.Placement.Generator(m.Buckets, o.Choices)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w: table size %d: %v", r.Path(), ErrCorrupt, m.Buckets, err)
	}
	return &sparseRecords[K, V]{path: r.Path(), o: o, m: m, gen: gen, now: nowOf(o), loads: make(map[uint64]uint8)}, nil
}

// forEach decodes every record of r, in the file's order, and hands it
// to t. A record in a bucket must name one of its key's candidates in the
// file's table, with room for it there; t.stash judges a record in the
// stash. A record whose expiry has passed is then left out, as Open
// leaves out expired entries; t.place gets the others. Errors name the
// file and the record.
func (w *sparseRecords[K, V]) forEach(r *snapshot.Reader, t sparseTarget[K, V]) error {
	dec := snapshot.NewDecoder[K, V]()
	n := 0
	return r.ForEach(func(rec []byte) error {
		n++
		if err := w.record(dec, rec, t); err != nil {
			return fmt.Errorf("snapshot %s: record %d: %w", w.path, n-1, err)
		}
		return nil
	})
}

// record decodes, checks and hands on one record (see forEach).
func (w *sparseRecords[K, V]) record(dec *snapshot.Decoder[K, V], rec []byte, t sparseTarget[K, V]) error {
	k, v, expiry, bi, err := dec.DecodeRecord(rec)
	if err != nil {
		return err
	}
	h := t.hash(k)
	if bi == stashIndex {
		err = t.stash(k)
	} else {
		err = w.count(k, bi, h, t.room)
	}
	if err != nil {
		return err
	}
	if expiry != 0 && expiry <= w.now {
		return nil
	}
	return t.place(k, v, expiry, h)
}

// count checks that bucket bi, recorded for key k of hash h, is one of the
// key's candidates in the file's table and has room for it (at most
// room(bi) records), and counts the record in the bucket's load.
func (w *sparseRecords[K, V]) count(k K, bi int64, h uint64, room func(uint64) int) error {
	var c [hashfn.MaxChoices]uint64
	w.gen.Fill(h, c[:])
	if err := checkRecordBucket(k, bi, w.m.Buckets, c[:w.o.Choices]); err != nil {
		return err
	}
	if most := room(uint64(bi)); int(w.loads[uint64(bi)]) >= most {
		return fmt.Errorf("%w: bucket %d holds more than %d records", ErrCorrupt, bi, most)
	}
	w.loads[uint64(bi)]++
	return nil
}

// checkLoads checks the loads of the buckets the records named against the
// file's histogram: every bucket no record names is empty.
func (w *sparseRecords[K, V]) checkLoads() error {
	got := snapshot.SparseHistogram(&w.gen, len(w.m.Histogram), histogramLoads(w.o, w.m.Buckets)-1, w.loads)
	for p := range got {
		if !slices.Equal(got[p], w.m.Histogram[p]) {
			return fmt.Errorf("snapshot %s: %w: part %d: the records give loads %v, the metadata %v", w.path, ErrCorrupt, p, got[p], w.m.Histogram[p])
		}
	}
	return nil
}
