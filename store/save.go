package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/twochoice/twochoice/internal/snapshot"
)

// Snapshot errors, for errors.Is. They are the sentinels of the snapshot
// format (internal/snapshot); every error of Save, OpenMap and OpenCache
// wraps one of them, or ErrKeyType or ErrValueType (or, from SaveContext,
// the context's error), and names the file. Every failure of Save leaves
// the previous snapshot untouched except ErrNotDurable.
var (
	// ErrNotFound: the snapshot file does not exist (it also matches
	// fs.ErrNotExist).
	ErrNotFound = snapshot.ErrNotFound
	// ErrNotSnapshot: the file is not a twochoice snapshot.
	ErrNotSnapshot = snapshot.ErrNotSnapshot
	// ErrCorrupt: the file is a snapshot but damaged (truncated, a flipped
	// bit, records that disagree with the metadata or with the hash).
	ErrCorrupt = snapshot.ErrCorrupt
	// ErrNewerVersion: the file was written by a newer format version.
	ErrNewerVersion = snapshot.ErrNewerVersion
	// ErrTypeMismatch: the snapshot's key or value type is not K or V:
	// another name, or the same name and another shape (fields, element
	// types, kinds; see OpenMap).
	ErrTypeMismatch = snapshot.ErrTypeMismatch
	// ErrOptionsMismatch: options given to OpenMap or OpenCache contradict
	// the snapshot, or the file holds the other type.
	ErrOptionsMismatch = snapshot.ErrOptionsMismatch
	// ErrLocked: another process holds the file (bbolt's open timeout).
	ErrLocked = snapshot.ErrLocked
	// ErrNoSpace: the disk filled up during Save (it also matches
	// syscall.ENOSPC). The previous snapshot is untouched.
	ErrNoSpace = snapshot.ErrNoSpace
	// ErrWrite: Save could not write the file for another reason than a
	// full disk (a missing or read-only directory, a directory in the
	// file's place, an I/O error); it also matches the system's error.
	// The previous snapshot is untouched.
	ErrWrite = snapshot.ErrWrite
	// ErrNotDurable: Save renamed the new snapshot into place, whole, but
	// syncing its directory failed afterwards: the file at the path is the
	// new snapshot, and a power loss may still bring back the previous one
	// (it also matches the system's error). Saving again once the
	// directory can be synced makes it durable.
	ErrNotDurable = snapshot.ErrNotDurable
	// ErrRead: the file exists but cannot be read (permissions, an I/O
	// error); it also matches the system's error.
	ErrRead = snapshot.ErrRead
	// ErrKeyType: the store's key type is hashed through hash/maphash,
	// whose hashes differ from one process to the next, so a snapshot of
	// it could not be restored into the same buckets. Strings, byte arrays
	// and integer kinds can be saved.
	ErrKeyType = errors.New("store: key type cannot be saved: its hash is not reproducible across processes")
	// ErrValueType: a value cannot be written with msgpack. A value type
	// msgpack would leave out whole (complex numbers, functions, channels)
	// is refused before the file is touched; a value it fails to encode
	// (a slice of complex numbers, an any holding one) stops the save.
	// The previous snapshot is untouched.
	ErrValueType = errors.New("store: value cannot be saved")
)

// Save writes a snapshot of the map to path: a consistent view of the
// map at one instant, taken while other goroutines keep reading and
// writing (see cow.go for how: readers never wait, and writers wait for at
// most one bucket's copy, or, when they change buckets faster than the file
// takes them, write those buckets to the file themselves). The file is
// written beside path under a temporary name, synced and renamed over
// path, so a crash or a kill at any moment leaves the previous file at
// path whole. If path is a symbolic link, the file it points to is
// replaced and the link kept. Records are streamed to the file as the walk goes: the
// memory Save needs does not grow with the store, apart from a bounded
// number of copies of buckets that writers change before the walk reaches
// them.
//
// docs/snapshot-format.md describes the format. Keys of types that NewMap
// hashes through hash/maphash cannot be saved (ErrKeyType);
// values must be encodable with msgpack (exported fields of structs), and
// a value type of complex numbers, functions or channels is refused
// (ErrValueType).
// Values come back as msgpack decodes them into V: a concrete V comes back
// as it was saved, but an interface V (any) gets msgpack's own types, so a
// Map[K, any] that held an int, a []int and a struct opens with an
// int64, a []any and a map[any]any; and channel, function and complex
// fields are not saved. Give V a concrete type for values that must round-trip
// exactly.
// One Save runs at a time per store; a second waits for the first.
func (s *Map[K, V]) Save(path string) error { return s.SaveProgress(path, nil) }

// Save writes a snapshot of the cache to path, as [Map.Save] does, with
// each entry's expiry; OpenCache restores it.
func (s *Cache[K, V]) Save(path string) error { return s.SaveProgress(path, nil) }

// SaveProgress is Save, calling progress (if not nil) from time to time,
// and once at the end, with the buckets written so far and in all, for
// a progress bar. It is called on Save's goroutine and must not call the
// store's write methods (they may wait for Save).
func (s *Map[K, V]) SaveProgress(path string, progress func(done, total uint64)) error {
	return s.SaveContext(context.Background(), path, progress)
}

// SaveProgress is Save, calling progress as [Map.SaveProgress] does.
func (s *Cache[K, V]) SaveProgress(path string, progress func(done, total uint64)) error {
	return s.SaveContext(context.Background(), path, progress)
}

// SaveContext is SaveProgress that gives up when ctx is done: the walk
// stops within a few thousand buckets, the temporary file is removed and
// the previous snapshot stays as it was; the error names the file and
// wraps ctx's error (context.Canceled, context.DeadlineExceeded). Once
// the file is complete it is committed whatever ctx says (the rename
// and the syncs are not cut short), so a nil error means the snapshot is
// saved. Waiting for another Save of the store to finish is not
// interrupted.
func (s *Map[K, V]) SaveContext(ctx context.Context, path string, progress func(done, total uint64)) error {
	return saveTo[K, V](ctx, path, progress, s)
}

// SaveContext is SaveProgress that gives up when ctx is done, as
// [Map.SaveContext] does.
func (s *Cache[K, V]) SaveContext(ctx context.Context, path string, progress func(done, total uint64)) error {
	return saveTo[K, V](ctx, path, progress, s)
}

// viewOwner is what saveTo needs of a Map or a Cache.
type viewOwner[K comparable, V any] interface {
	beginView(w *snapshot.Writer) *cowView[K, V]
	endView(v *cowView[K, V])
	// viewConfig returns the options of the table v views, with its hash
	// function.
	viewConfig(v *cowView[K, V]) config
	saveLock() *sync.Mutex
}

func (s *Map[K, V]) viewConfig(v *cowView[K, V]) config { return s.configOf(v.t.(*table[K, V])) }
func (s *Map[K, V]) saveLock() *sync.Mutex              { return &s.saveMu }
func (s *Cache[K, V]) viewConfig(v *cowView[K, V]) config {
	return s.configOf(v.t.(*cacheTable[K, V]))
}
func (s *Cache[K, V]) saveLock() *sync.Mutex { return &s.saveMu }

// saveTo is SaveContext for either type.
func saveTo[K comparable, V any](ctx context.Context, path string, progress func(done, total uint64), s viewOwner[K, V]) error {
	if shapeOf(reflect.TypeFor[K]()) == shapeOther {
		return fmt.Errorf("snapshot %s: %w (key type %s)", path, ErrKeyType, typeName[K]())
	}
	// msgpack skips a struct field of these kinds, so a record's value
	// field would be missing: Open would give zero values and inspect
	// would read the expiry as the value.
	switch reflect.TypeFor[V]().Kind() {
	case reflect.Complex64, reflect.Complex128, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return fmt.Errorf("snapshot %s: %w: msgpack does not write a %s", path, ErrValueType, typeName[V]())
	}
	mu := s.saveLock()
	mu.Lock()
	defer mu.Unlock()
	if err := ctx.Err(); err != nil {
		return abandoned(path, err)
	}
	w, err := snapshot.Create(path)
	if err != nil {
		return err
	}
	defer w.Abort() // after a successful Commit it does nothing
	v := s.beginView(w)
	// The view ends even if progress panics (a caller may recover): a
	// view left behind would keep the table pinned, so that it never grew
	// again, and writers copying buckets for it.
	viewing := true
	defer func() {
		if viewing {
			s.endView(v)
		}
	}()
	created := time.Now().UnixNano()
	m, err := writeView(ctx, v, progress, s.viewConfig(v))
	s.endView(v)
	viewing = false
	if err == nil {
		err = ctx.Err()
		if err != nil {
			err = abandoned(path, err)
		}
	}
	if err != nil {
		return err
	}
	m.Created = created
	return w.Commit(m)
}

// abandoned is SaveContext's error when ctx is done.
func abandoned(path string, err error) error {
	return fmt.Errorf("snapshot %s: save abandoned, the previous file left as it was: %w", path, err)
}

// ctxCheckBuckets is how many buckets writeView walks between two looks
// at its context.
const ctxCheckBuckets = 4096

// writeView walks the view bucket by bucket and appends its records, and
// stops if ctx is done.
func writeView[K comparable, V any](ctx context.Context, v *cowView[K, V], progress func(done, total uint64), o config) (snapshot.Meta, error) {
	// put writes entries to the file; the caller holds v.out.
	put := func(es []viewEntry[K, V]) error {
		defer clear(es) // drop references to the store's keys and values
		if v.err != nil {
			return v.err
		}
		for x := range es {
			e := &es[x]
			rec, err := v.enc.EncodeRecord(e.key, e.val, e.expiry, e.bucket)
			if err != nil {
				// Keys are of types that always encode: the value failed.
				return fmt.Errorf("snapshot %s: %w: key %v: %v", v.w.Path(), ErrValueType, e.key, err)
			}
			if err := v.w.Append(rec); err != nil {
				return err
			}
		}
		return nil
	}
	v.out.Lock()
	err := put(v.stash)
	v.out.Unlock()
	if err != nil {
		return snapshot.Meta{}, err
	}
	var own, spare, taken []viewEntry[K, V]
	counts := newCounts(len(v.counts))
	for i := range v.n {
		if i%ctxCheckBuckets == 0 {
			if err := ctx.Err(); err != nil {
				return snapshot.Meta{}, abandoned(v.w.Path(), err)
			}
			if progress != nil {
				progress(i, v.n)
			}
		}
		own, taken = v.next(i, own[:0], spare, counts)
		// One bucket's worth of records per hold of the file side, so a
		// writer that assists waits for little.
		for _, es := range [2][]viewEntry[K, V]{own, taken} {
			for len(es) > 0 {
				n := min(len(es), slotsPerBucket)
				v.out.Lock()
				err := put(es[:n])
				v.out.Unlock()
				if err != nil {
					return snapshot.Meta{}, err
				}
				es = es[n:]
			}
		}
		spare = taken
	}
	if progress != nil {
		progress(v.n, v.n)
	}
	// Every bucket has been claimed; wait for writers still copying one
	// (the walker skipped it), then take what writers left in the pending
	// list since the last bucket.
	v.settle()
	v.mu.Lock()
	taken, v.pending = v.pending, nil
	v.mu.Unlock()
	v.out.Lock()
	err = put(taken)
	v.out.Unlock()
	if err != nil {
		return snapshot.Meta{}, err
	}
	m := snapshot.Meta{
		KeyType:    typeName[K](),
		ValueType:  typeName[V](),
		KeyDesc:    snapshot.Describe(reflect.TypeFor[K]()),
		ValueDesc:  snapshot.Describe(reflect.TypeFor[V]()),
		Placement:  o.Placement.String(),
		Choices:    o.Choices,
		BucketSize: o.BucketSize,
		Hash:       o.Hash.String(),
		Seed:       o.Seed,
		Buckets:    v.n,
		Stash:      uint64(len(v.stash)),
		MaxEntries: o.MaxEntries,
		MaxWeight:  o.MaxWeight,
		Histogram:  make([][]uint64, len(v.counts)),
		// A cache's durations, so that a reopened cache keeps them.
		DefaultTTL:        int64(o.DefaultTTL),
		ExpireAfterAccess: int64(o.ExpireAfterAccess),
		RefreshAfter:      int64(o.RefreshAfter),
	}
	v.mu.Lock() // every bucket is copied: no writer touches counts now
	for p, c := range v.counts {
		for k, x := range c {
			counts[p][k] += x
		}
		m.Histogram[p] = counts[p][:histogramLoads(&o, v.n)]
	}
	v.mu.Unlock()
	return m, nil
}

// typeName is the name a snapshot records for a Go type, and Open checks.
func typeName[T any]() string { return reflect.TypeFor[T]().String() }
