package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/hashicorp/go-msgpack/v2/codec"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// DefaultTimeout is how long Open waits for a file another process holds
// open for writing.
const DefaultTimeout = time.Second

// Reader reads one snapshot.
type Reader struct {
	path string
	size int64 // the file's, when opened
	db   *bolt.DB
	meta Meta
	// pages are the file's two bbolt meta pages, as checkMetaPages read
	// them.
	pages metaPages
}

// Open opens the snapshot at path read-only, checks its format and version
// and reads its metadata. It waits up to timeout for a writer elsewhere to
// let go of the file (0 means DefaultTimeout).
func Open(path string, timeout time.Duration) (r *Reader, err error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	// The stat keeps Open from opening a FIFO, which would wait for a
	// writer; everything after it reads the one file opened below, since
	// a save may rename another snapshot over path at any moment.
	fi, err := os.Stat(path)
	if err != nil {
		return nil, statError(path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("snapshot %s: %w: not a regular file", path, ErrNotSnapshot)
	}
	if testHook != nil {
		testHook("stat", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, statError(path, err)
	}
	// bbolt takes f (OpenFile below) and closes it with the database, or
	// when its Open fails; closing it again is harmless, and covers a
	// panic inside bbolt's Open.
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	// The size and the magic number are those of the file opened, which
	// bbolt maps: the path may name a newer, larger snapshot by now, and
	// its claims checked against this file's size would look corrupt.
	if fi, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w (%w)", path, ErrRead, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("snapshot %s: %w: not a regular file", path, ErrNotSnapshot)
	}
	pages, err := checkMetaPages(f, path, fi.Size())
	if err != nil {
		return nil, err
	}
	r = &Reader{path: path, size: fi.Size(), pages: pages}
	defer r.guard(&err, debug.SetPanicOnFault(true))
	db, err := bolt.Open(path, 0o444, &bolt.Options{ReadOnly: true, Timeout: timeout,
		OpenFile: func(string, int, fs.FileMode) (*os.File, error) { return f, nil }})
	switch {
	case err == nil:
	case errors.Is(err, berrors.ErrTimeout):
		return nil, fmt.Errorf("snapshot %s: %w (waited %v)", path, ErrLocked, timeout)
	case pages.foreign():
		// Both pages fail bbolt's checks, and one of them is whole but of
		// another version of bbolt's format.
		return nil, fmt.Errorf("snapshot %s: %w: a bbolt database of another format version (%v)", path, ErrNotSnapshot, err)
	default:
		// A meta page with bbolt's magic number, and neither page sound
		// (a checksum that fails, a flipped version), a file too short to
		// map, and the like: a bbolt file that has been damaged.
		return nil, fmt.Errorf("snapshot %s: %w: %v", path, ErrCorrupt, err)
	}
	r.db = db
	if err := db.View(r.readMeta); err != nil {
		db.Close()
		return nil, err
	}
	return r, nil
}

// statError is Open's error when path cannot be found or opened.
func statError(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("snapshot %s: %w (%w)", path, ErrNotFound, err)
	}
	return fmt.Errorf("snapshot %s: %w (%w)", path, ErrRead, err)
}

// guard turns a panic or a memory fault inside bbolt (which may happen on
// a damaged file: a page that points nowhere, a file shorter than its
// mapped pages) into ErrCorrupt. The function that reads defers it as
//
//	defer r.guard(&err, debug.SetPanicOnFault(true))
//
// so that faults panic (instead of killing the process) from its first
// line on, and the goroutine's setting is restored afterwards.
func (r *Reader) guard(err *error, oldFault bool) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("snapshot %s: %w: the file is damaged or truncated (reading it failed with: %v)", r.path, ErrCorrupt, p)
		if r.db != nil {
			r.db.Close()
			r.db = nil
		}
	}
	debug.SetPanicOnFault(oldFault)
}

func (r *Reader) readMeta(tx *bolt.Tx) error {
	mb := tx.Bucket(bucketMeta)
	if mb == nil {
		if tx.Bucket(bucketEntries) != nil {
			return fmt.Errorf("snapshot %s: %w: no metadata (the write did not finish)", r.path, ErrCorrupt)
		}
		if r.pages.damaged() {
			return fmt.Errorf("snapshot %s: %w: a meta page of the database is damaged, and the older state kept in the other holds no snapshot", r.path, ErrCorrupt)
		}
		return fmt.Errorf("snapshot %s: %w: a bbolt database without twochoice metadata", r.path, ErrNotSnapshot)
	}
	format, v, raw := mb.Get(keyFormat), mb.Get(keyVersion), mb.Get(keyMeta)
	for i, x := range [][]byte{format, v, raw} {
		if err := r.within(x, []string{"the format field", "the version field", "the metadata record"}[i]); err != nil {
			return err
		}
	}
	if !bytes.Equal(format, []byte(FormatName)) {
		return fmt.Errorf("snapshot %s: %w: format %s", r.path, ErrNotSnapshot, quoteStart(format))
	}
	if len(v) != 4 {
		return fmt.Errorf("snapshot %s: %w: bad version field", r.path, ErrCorrupt)
	}
	if ver := binary.BigEndian.Uint32(v); ver > Version {
		return fmt.Errorf("snapshot %s: %w: version %d, this build reads up to %d", r.path, ErrNewerVersion, ver, Version)
	}
	if raw == nil {
		return fmt.Errorf("snapshot %s: %w: no metadata record", r.path, ErrCorrupt)
	}
	if err := codec.NewDecoderBytes(raw, handle).Decode(&r.meta); err != nil {
		return fmt.Errorf("snapshot %s: %w: metadata does not decode: %v", r.path, ErrCorrupt, err)
	}
	if err := r.meta.check(r.size); err != nil {
		return fmt.Errorf("snapshot %s: %w: metadata: %v", r.path, ErrCorrupt, err)
	}
	if tx.Bucket(bucketEntries) == nil {
		return fmt.Errorf("snapshot %s: %w: no entries bucket", r.path, ErrCorrupt)
	}
	return nil
}

// within returns ErrCorrupt if value v, called name in the message, is
// longer than the file. bbolt takes a value's length from its page as it
// is, and on a damaged page that can be up to 4 GiB, running past the
// file into whatever memory follows: reading, decoding or quoting such a
// value took minutes and then all memory (FuzzOpen found a format value
// that quoted to 7 GB).
func (r *Reader) within(v []byte, name string) error {
	if int64(len(v)) > r.size {
		return fmt.Errorf("snapshot %s: %w: %s claims %d bytes, in a file of %d", r.path, ErrCorrupt, name, len(v), r.size)
	}
	return nil
}

// quoteStart quotes at most the first 40 bytes of b, for an error message
// about a value read from a file that may be damaged.
func quoteStart(b []byte) string {
	const most = 40
	if len(b) > most {
		return fmt.Sprintf("%q… (%d bytes)", b[:most], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// Path returns the file's path.
func (r *Reader) Path() string { return r.path }

// Meta returns the snapshot's metadata.
func (r *Reader) Meta() Meta { return r.meta }

// ForEach calls fn with every record, in the order they were saved. The
// slice is valid only during the call. After the last record it checks the
// count and the checksum against the metadata; a mismatch is ErrCorrupt —
// so a caller that builds something from the records must not use it
// until ForEach has returned nil. An error from fn stops the walk and is
// returned as is.
func (r *Reader) ForEach(fn func(rec []byte) error) (err error) {
	defer r.guard(&err, debug.SetPanicOnFault(true))
	sum := xxhash.New()
	var n uint64
	err = r.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketEntries).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(k) != 8 || binary.BigEndian.Uint64(k) != n {
				return fmt.Errorf("snapshot %s: %w: record %d out of sequence", r.path, ErrCorrupt, n)
			}
			if v == nil {
				return fmt.Errorf("snapshot %s: %w: record %d is a bucket", r.path, ErrCorrupt, n)
			}
			if err := r.within(v, fmt.Sprint("record ", n)); err != nil {
				return err
			}
			checksumRecord(sum, v)
			n++
			if err := fn(v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n != r.meta.Entries {
		return fmt.Errorf("snapshot %s: %w: %d records, metadata says %d", r.path, ErrCorrupt, n, r.meta.Entries)
	}
	if got := sum.Sum64(); got != r.meta.Checksum {
		return fmt.Errorf("snapshot %s: %w: checksum %#x, metadata says %#x", r.path, ErrCorrupt, got, r.meta.Checksum)
	}
	return nil
}

// Close releases the file.
func (r *Reader) Close() error {
	if r.db == nil {
		return nil
	}
	err := r.db.Close()
	r.db = nil
	return err
}
