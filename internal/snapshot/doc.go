// Package snapshot reads and writes twochoice snapshot files: the on-disk
// format behind the store's Save, OpenMap and OpenCache and the inspect
// command. It knows nothing of a store's Go types; the store encodes its
// keys and values with [EncodeRecord] and decodes them with [DecodeRecord],
// and inspect reads any snapshot with [DecodeAny].
//
// # Format, version 1
//
// A snapshot is a bbolt database (go.etcd.io/bbolt) with two top-level
// buckets:
//
//   - "meta" holds "format" = "twochoice-snapshot", "version" = the format
//     version as 4 big-endian bytes, and "meta" = the [Meta] record encoded
//     with msgpack (github.com/hashicorp/go-msgpack/v2): key and value type
//     names, placement, choices, bucket size, hash family, seed, table size,
//     entry and stash counts, creation time, the bucket load histogram, a
//     checksum of the entries, and the shapes of the key and value types
//     ([TypeDesc], typedesc.go). The "meta" key is written last, in the last
//     transaction: a file without it is incomplete.
//
// The shapes are two optional keys of the version-1 metadata map
// (key_desc, value_desc); the records are the same with or without them.
// A reader that does not know them skips them, as it skips any key it
// does not know, and checks the type names alone: a new version number
// would make such files unreadable to it, for a check it does not make.
// A file without shapes is checked by the names alone.
//   - "entries" holds one record per entry, under an 8-byte big-endian
//     sequence number (so records come back in the order they were saved,
//     and bbolt appends instead of splitting pages). A record is the
//     msgpack array [key, value, expiry, bucket]: expiry in Unix
//     nanoseconds (0: never), bucket the index of the table bucket that
//     held the entry (-1: the stash).
//
// Records are written in transactions of at most [TxBytes] bytes, so a large
// store never needs one giant transaction. The checksum is xxHash64 (seed
// 0) over the records' bytes in sequence order, each preceded by its length
// as 4 little-endian bytes; bbolt checksums only its own meta pages, and
// the checksum catches a flipped bit anywhere in the entries.
//
// # Atomicity
//
// [Create] writes to a temporary file beside the target (same directory,
// so the rename cannot cross file systems); [Writer.Commit] syncs it,
// closes it, renames it over the target and syncs the directory. A crash or
// a kill at any moment before the rename leaves the previous snapshot
// untouched, and after the directory sync the new one whole (a kill after
// the rename leaves the new one; a power loss between the rename and the
// sync, one or the other, whole). A failed or abandoned write
// leaves the previous snapshot untouched and removes its temporary file,
// except when only the directory sync fails ([ErrNotDurable]): it has to
// come after the rename, so the new snapshot is then in place, whole, but
// a crash before the directory reaches the disk may bring back the
// previous one. A temporary file left by a killed process is removed by
// the next Create for the same path, once no process holds its lock (only
// names of the shape Create makes: the path, ".tmp-" and 12 lowercase hex
// digits). A live save holds its file's lock until the file is renamed,
// so two saves to one path at once both succeed, and the last to rename
// wins: the file is always one of them, whole. A new file takes the permission bits of the one it replaces
// (until the rename it is readable by its owner alone), or 0644 less the
// umask. A path that is a symbolic link keeps its link: the snapshot
// replaces the file the link points to (through a chain of links; one
// that does not exist yet is created), and its temporary file is written
// beside that file rather than beside the link ([Target]).
//
// # Errors
//
// Every failure wraps one of the sentinel errors below, and names the file.
// [Open] checks the metadata's claims against each other, the format's
// limits and the file's size before returning it (see Meta.check), so a
// reader may size what it allocates by the entry count; the table size
// it may not trust alone, since a store's table never shrinks.
// Reading a damaged file never panics: bbolt may panic or fault on a
// corrupt page, and [Open] and [Reader.ForEach] turn both into [ErrCorrupt].
// A damaged bbolt meta page (a flipped bit anywhere in it) is ErrCorrupt
// too, unless the other page holds the whole snapshot (metapage.go);
// ErrNotSnapshot is for files that are not snapshots at all.
package snapshot
