package snapshot

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/cespare/xxhash/v2"
	"github.com/hashicorp/go-msgpack/v2/codec"
	bolt "go.etcd.io/bbolt"
)

// initialMmap is the writer's initial mapping of the file: 1 GiB on 64-bit
// machines, none on 32-bit ones where address space is short.
const initialMmap = (1 << 30) * (strconv.IntSize / 64)

// TxBytes bounds the record bytes written in one bbolt transaction.
const TxBytes = 4 << 20

// Writer writes one snapshot. Append records, then Commit; or Abort.
type Writer struct {
	// path is the path asked for, which messages name; target is the
	// file the rename replaces: path, or the file it links to.
	path, target, tmp string

	db      *bolt.DB
	file    *os.File // the file bbolt opened (and locks), while db is open
	tx      *bolt.Tx
	entries *bolt.Bucket
	txBytes int
	seq     uint64
	sum     *xxhash.Digest
	err     error
	// perm is the replaced file's permission bits, which Commit gives the
	// new file, if keepPerm (there was a file).
	perm     fs.FileMode
	keepPerm bool
	// arena holds copies of the records of the open transaction: bbolt
	// keeps a reference to a value until the transaction commits, and the
	// caller's Encoder reuses its buffer for the next record.
	arena []byte
}

// Create starts a snapshot that Commit will move to path. The data goes to
// a temporary file in path's directory until then. If path is a symbolic
// link, the snapshot replaces the file it points to (following a chain of
// links; the file need not exist yet) and the link stays: the temporary
// file goes beside that file, so that the rename stays on its file system.
func Create(path string) (*Writer, error) {
	// Checked before any work: the rename at the end would fail on them,
	// after the whole store was written.
	if path == "" {
		return nil, fmt.Errorf("snapshot: %w: an empty path", ErrWrite)
	}
	target, err := Target(path)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w (%w)", path, ErrWrite, err)
	}
	old, statErr := os.Stat(target)
	if statErr == nil && old.IsDir() {
		return nil, fmt.Errorf("snapshot %s: %w: a directory is in the way", path, ErrWrite)
	}
	removeStale(target)
	w := &Writer{path: path, target: target, sum: xxhash.New()}
	// A new file gets 0644 less the umask. A file replaced keeps its
	// permissions: one made private stays private, and its successor is
	// private to this process (0600) until Commit gives it those bits.
	create := fs.FileMode(0o644)
	if statErr == nil {
		create, w.perm, w.keepPerm = 0o600, old.Mode().Perm(), true
	}
	for attempt := 1; ; attempt++ {
		ok, err := w.open(create)
		if err != nil {
			return nil, err
		}
		if ok {
			break
		}
		if attempt == maxOpenAttempts {
			w.Abort()
			return nil, fmt.Errorf("snapshot %s: %w: %d temporary files in a row were removed as soon as they were made (by other saves to the same path?)",
				path, ErrWrite, attempt)
		}
	}
	if err := w.begin(); err != nil {
		w.Abort()
		return nil, err
	}
	return w, nil
}

// maxOpenAttempts bounds the temporary files Create makes in turn when
// each is removed before it is locked (see open).
const maxOpenAttempts = 8

// open creates the temporary file under a new random name and opens it in
// bbolt, which locks it. It reports false if the file was removed between
// its creation and the lock: another save's cleanup (removeStale) found it
// unlocked then, and took it for a killed save's. Once locked, the file
// at the name is known to be this save's, and no cleanup removes it.
func (w *Writer) open(create fs.FileMode) (ok bool, err error) {
	var suffix [6]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return false, fmt.Errorf("snapshot %s: %w (%w)", w.path, ErrWrite, err)
	}
	w.tmp = w.target + tmpMark + hex.EncodeToString(suffix[:])
	// NoSync: one fsync at the end (in Commit) instead of one per
	// transaction; until the rename the file is only a draft.
	// NoGrowSync: the file grows by its writes, not by bbolt's truncate
	// ahead of them (and the fsync after each), for the same reason, and
	// because bbolt reports a failed truncate as text ("file resize
	// error: ..."), losing the system's error that ErrWrite and
	// ErrNoSpace must match (EFBIG under a file size limit); a write's
	// error comes back whole.
	// A large initial mapping (address space, not memory) spares bbolt
	// from remapping the file each time it doubles while records pour in.
	// OpenFile: bbolt does not give out its file, which Commit syncs
	// and renames while bbolt holds it locked.
	db, err := bolt.Open(w.tmp, create, &bolt.Options{NoSync: true, NoGrowSync: true, NoFreelistSync: true, InitialMmapSize: initialMmap,
		OpenFile: func(name string, flag int, perm fs.FileMode) (*os.File, error) {
			f, err := os.OpenFile(name, flag, perm)
			w.file = f
			return f, err
		}})
	if err != nil {
		os.Remove(w.tmp)
		return false, w.wrap("creating", err)
	}
	w.db = db
	if testHook != nil {
		testHook("opened", w.tmp)
	}
	locked, err := w.file.Stat()
	if err != nil {
		w.Abort()
		return false, w.wrap("creating", err)
	}
	if named, err := os.Stat(w.tmp); err != nil || !os.SameFile(locked, named) {
		// Not ours to remove: the name is gone, or another's.
		w.closeDB()
		w.tmp = ""
		return false, nil
	}
	return true, nil
}

// wrap names the file and the step, and adds ErrNoSpace when the disk is
// full, ErrWrite otherwise.
func (w *Writer) wrap(step string, err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("snapshot %s: %s: %w (%w)", w.path, step, ErrNoSpace, err)
	}
	return fmt.Errorf("snapshot %s: %s: %w (%w)", w.path, step, ErrWrite, err)
}

func (w *Writer) begin() error {
	tx, err := w.db.Begin(true)
	if err != nil {
		return w.wrap("starting a transaction", err)
	}
	b, err := tx.CreateBucketIfNotExists(bucketEntries)
	if err != nil {
		tx.Rollback()
		return w.wrap("creating the entries bucket", err)
	}
	// Keys only ever grow, so pages can be packed full.
	b.FillPercent = 1.0
	w.tx, w.entries, w.txBytes = tx, b, 0
	return nil
}

// Append adds one encoded record (from an Encoder). The bytes are copied.
func (w *Writer) Append(rec []byte) error {
	if w.err != nil {
		return w.err
	}
	if len(w.arena)+8+len(rec) > cap(w.arena) {
		w.arena = make([]byte, 0, max(1<<20, 8+len(rec)))
	}
	start := len(w.arena)
	w.arena = binary.BigEndian.AppendUint64(w.arena, w.seq)
	w.arena = append(w.arena, rec...)
	key, val := w.arena[start:start+8], w.arena[start+8:]
	if err := w.entries.Put(key, val); err != nil {
		w.err = w.wrap("writing a record", err)
		return w.err
	}
	w.seq++
	checksumRecord(w.sum, rec)
	w.txBytes += len(rec) + len(key)
	if w.txBytes >= TxBytes {
		err := w.tx.Commit()
		w.tx, w.arena = nil, nil
		if err != nil {
			w.err = w.wrap("committing records", err)
			return w.err
		}
		if err := w.begin(); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

func checksumRecord(d *xxhash.Digest, rec []byte) {
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(rec)))
	d.Write(n[:])
	d.Write(rec)
}

// Fits reports whether a record of n bytes can be appended without
// committing the open transaction (and without a failed write before).
func (w *Writer) Fits(n int) bool { return w.err == nil && w.txBytes+n+8 < TxBytes }

// Path returns the path the snapshot is for, as given to Create (not the
// temporary file's, nor a link's target).
func (w *Writer) Path() string { return w.path }

// Records returns how many records were appended.
func (w *Writer) Records() uint64 { return w.seq }

// Commit writes the metadata (with the entry count and checksum filled in),
// syncs the file, renames it over the target and syncs the directory. The
// Writer is done afterwards, whether Commit succeeded or not. On failure
// the target is untouched and the temporary file removed, with one
// exception: ErrNotDurable, a failed directory sync after the rename,
// when the new snapshot is in place but may not survive a crash.
func (w *Writer) Commit(m Meta) error {
	if w.err != nil {
		w.Abort()
		return w.err
	}
	m.Version = Version
	m.Entries = w.seq
	m.Checksum = w.sum.Sum64()
	var enc []byte
	if err := codec.NewEncoderBytes(&enc, handle).Encode(&m); err != nil {
		w.Abort()
		return w.wrap("encoding the metadata", err)
	}
	mb, err := w.tx.CreateBucketIfNotExists(bucketMeta)
	if err == nil {
		var v [4]byte
		binary.BigEndian.PutUint32(v[:], Version)
		err = errors.Join(mb.Put(keyFormat, []byte(FormatName)), mb.Put(keyVersion, v[:]), mb.Put(keyMeta, enc))
	}
	if err == nil {
		err = w.tx.Commit()
		w.tx = nil
	}
	// The snapshot is cut to the pages in use, so that it is no bigger
	// than its data and a cut-off copy is seen as truncated: bbolt's
	// mapping grows the file ahead of the data where a mapping must be
	// backed by the file (Windows), and a truncate ahead would (without
	// NoGrowSync).
	var size int64
	if err == nil {
		err = w.db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil })
	}
	if err != nil {
		w.Abort()
		return w.wrap("writing the metadata", err)
	}
	if finishLocked {
		// While bbolt holds the file open it holds its lock, which keeps
		// another save's cleanup (removeStale) off it: cut, sync and
		// rename it through bbolt's own descriptor, and close after.
		err = w.finish(w.file, size)
	} else {
		// Where an open file cannot be renamed or a mapped one cut
		// (Windows), close first; there is no cleanup to keep off.
		err = w.closeDB()
		var f *os.File
		if err == nil {
			f, err = os.OpenFile(w.tmp, os.O_RDWR, 0)
		}
		if err == nil {
			err = w.finish(f, size)
		}
	}
	if err != nil {
		w.Abort()
		return w.wrap("closing", err)
	}
	// The snapshot is in place and synced: an error in unmapping or
	// closing the file changes nothing of it.
	w.closeDB()
	// The rename is durable once the directory is synced, so the sync
	// comes after it, and its failure cannot leave the previous snapshot
	// untouched: the new one is in place, and is said to be.
	if err := syncDirFunc(filepath.Dir(w.target)); err != nil {
		return fmt.Errorf("snapshot %s: %w: syncing %s failed (%w)", w.path, ErrNotDurable, filepath.Dir(w.target), err)
	}
	return nil
}

// testHook, if set (by tests only), is called at the steps of a save
// where another process could interfere: "opened" once bbolt has opened
// (and locked) the temporary file tmp, "rename" just before the rename;
// and by Open, "stat" with the path, once it has found a regular file
// there and before it opens it.
var testHook func(step, tmp string)

// syncDirFunc is syncDir, a variable so that tests can make it fail.
var syncDirFunc = syncDir

// finish cuts the temporary file f to size, gives it the permissions it
// is to have, syncs it, renames it over the target, and closes f unless
// it is bbolt's own.
func (w *Writer) finish(f *os.File, size int64) error {
	err := f.Truncate(size)
	if err == nil && w.keepPerm {
		// Through the open file, so that read-only bits take effect once
		// it is written.
		err = f.Chmod(w.perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if w.db == nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		if testHook != nil {
			testHook("rename", w.tmp)
		}
		err = os.Rename(w.tmp, w.target)
	}
	return err
}

// closeDB closes bbolt's handle of the temporary file, if open, and
// forgets the file it had opened.
func (w *Writer) closeDB() error {
	if w.db == nil {
		return nil
	}
	err := w.db.Close()
	w.db, w.file = nil, nil
	return err
}

// Abort drops the snapshot and removes its temporary file. It is safe to
// call after Commit (it then does nothing).
func (w *Writer) Abort() {
	if w.tx != nil {
		w.tx.Rollback()
		w.tx = nil
	}
	w.closeDB()
	if w.tmp != "" {
		os.Remove(w.tmp)
	}
}

// tmpMark joins a snapshot's path and the random suffix of its temporary
// file: path + tmpMark + 12 lowercase hex digits.
const tmpMark = ".tmp-"

// isTemp reports whether name is a temporary file of a save to path. Only
// the exact shape Create makes counts: removeStale deletes what matches,
// and "notes.snap.tmp-old" is the user's own file.
func isTemp(name, path string) bool {
	suffix, ok := strings.CutPrefix(name, path+tmpMark)
	if !ok || len(suffix) != 12 {
		return false
	}
	for i := range len(suffix) {
		if c := suffix[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// globEscape quotes the characters filepath.Match treats specially.
func globEscape(s string) string {
	var b []byte
	for i := range len(s) {
		switch s[i] {
		case '*', '?', '[', '\\':
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return string(b)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
