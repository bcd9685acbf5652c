package snapshot

import "errors"

// The sentinel errors. The store re-exports them under the same names.
var (
	// ErrNotFound: the file does not exist. It also matches fs.ErrNotExist.
	ErrNotFound = errors.New("store: snapshot not found")
	// ErrNotSnapshot: the file is not a bbolt database, or is one but not a
	// twochoice snapshot.
	ErrNotSnapshot = errors.New("store: not a twochoice snapshot")
	// ErrCorrupt: the file is a snapshot but damaged: truncated, a flipped
	// bit, an unfinished write, or records that disagree with the metadata.
	ErrCorrupt = errors.New("store: snapshot corrupt")
	// ErrNewerVersion: the file was written by a newer format version.
	ErrNewerVersion = errors.New("store: snapshot from a newer format version")
	// ErrTypeMismatch: the snapshot's key or value type is not the one
	// asked for: another name, or the same name and another shape
	// (TypeDesc).
	ErrTypeMismatch = errors.New("store: snapshot key or value type mismatch")
	// ErrOptionsMismatch: options given to Open contradict the snapshot.
	ErrOptionsMismatch = errors.New("store: options contradict the snapshot")
	// ErrLocked: another process holds the file open for writing (bbolt's
	// open timeout expired).
	ErrLocked = errors.New("store: snapshot locked by another process")
	// ErrNoSpace: the disk filled up while writing. It also matches
	// syscall.ENOSPC.
	ErrNoSpace = errors.New("store: no space left for the snapshot")
	// ErrWrite: the snapshot could not be written for another reason than
	// a full disk: a directory that does not exist or cannot be written, a
	// directory in the file's place, an I/O error. It also matches the
	// system's error (fs.ErrPermission, syscall.EISDIR, ...).
	ErrWrite = errors.New("store: snapshot cannot be written")
	// ErrNotDurable: the new snapshot was renamed into place, whole, but
	// syncing its directory failed afterwards, so the rename may not
	// survive a crash: the file at the path is the new snapshot, and after
	// a power loss the directory may show the previous one again. Saving
	// again once the directory can be synced makes it durable. It also
	// matches the system's error. (The sync cannot come first: it is what
	// makes the rename durable.)
	ErrNotDurable = errors.New("store: snapshot replaced, but its directory entry may not be durable")
	// ErrRead: the file exists but cannot be read (permissions, an I/O
	// error). It also matches the system's error.
	ErrRead = errors.New("store: snapshot cannot be read")
)
