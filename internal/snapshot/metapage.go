package snapshot

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"
)

// bbolt's meta pages: a bbolt file starts with two, each a 16-byte page
// header followed by the meta (little-endian on the machines bbolt
// supports): magic number, format version, page size, flags, root bucket,
// free list, high-water mark, transaction id, and an FNV-64a checksum of
// the fields before it. A commit writes the page of its transaction id's
// parity, so a sound file has both pages sound, one a transaction older
// than the other. bbolt reads the newer sound page and, silently, falls
// back to the other when a page fails its checks. A snapshot's older state
// holds no snapshot metadata (it is written in the last transaction), so
// Open checks the pages itself: a file whose state lacks the metadata is
// someone else's database only if both pages are sound, and damaged
// otherwise. A file holds one snapshot (a save writes a new file), so a
// state that holds the metadata is that snapshot, whichever page it comes
// from, and the records' checksum vouches for it.
const (
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	boltPageHeader = 16
	boltSummed     = 56 // the meta's bytes before its checksum
)

// metaPage is what checkMetaPages found in one of bbolt's meta pages.
type metaPage struct {
	magic    bool   // bbolt's magic number is there
	summed   bool   // the checksum matches
	version  uint32 // the format version
	pageSize uint32
}

// sound reports whether bbolt accepts the page: its magic number, format
// version and checksum.
func (p metaPage) sound() bool { return p.magic && p.version == boltVersion && p.summed }

// metaPages are the two meta pages of a file.
type metaPages [2]metaPage

// damaged reports whether either page fails bbolt's checks: bbolt then
// reads the other page's state, which may be older.
func (m metaPages) damaged() bool { return !m[0].sound() || !m[1].sound() }

// foreign reports whether a page is whole (magic number and checksum) but
// of another version of bbolt's format.
func (m metaPages) foreign() bool {
	for _, p := range m {
		if p.magic && p.summed && p.version != boltVersion {
			return true
		}
	}
	return false
}

// readMetaPage reads the meta page at offset off of f.
func readMetaPage(f *os.File, off int64) metaPage {
	var b [boltPageHeader + boltSummed + 8]byte
	if n, _ := f.ReadAt(b[:], off); n < len(b) {
		return metaPage{}
	}
	m := b[boltPageHeader:]
	h := fnv.New64a()
	h.Write(m[:boltSummed])
	return metaPage{
		magic:    binary.LittleEndian.Uint32(m) == boltMagic,
		summed:   binary.LittleEndian.Uint64(m[boltSummed:]) == h.Sum64(),
		version:  binary.LittleEndian.Uint32(m[4:]),
		pageSize: binary.LittleEndian.Uint32(m[8:]),
	}
}

// checkMetaPages reads the two meta pages of f, of size bytes, before
// bbolt sees it, and tells a file that is not a bbolt database at all
// (empty, or without bbolt's magic number in either meta page) from a
// damaged one: bbolt would try to initialize an empty file, and reports a
// short text file as too small rather than as foreign.
func checkMetaPages(f *os.File, path string, size int64) (metaPages, error) {
	if size == 0 {
		return metaPages{}, fmt.Errorf("snapshot %s: %w: the file is empty", path, ErrNotSnapshot)
	}
	var m metaPages
	m[0] = readMetaPage(f, 0)
	if p := m[0]; p.sound() && p.pageSize >= 1024 && int64(p.pageSize) < size {
		m[1] = readMetaPage(f, int64(p.pageSize))
	} else {
		// The second page is where bbolt looks for it when the first
		// does not give the page size: the first sound page at 1 KiB
		// times a power of two, up to 16 MiB; or else, here, the first
		// with the magic number.
		for i := range 15 {
			off := int64(1024) << i
			if off >= size {
				break
			}
			p := readMetaPage(f, off)
			if p.sound() && int64(p.pageSize) == off {
				m[1] = p
				break
			}
			if p.magic && !m[1].magic {
				m[1] = p
			}
		}
	}
	if !m[0].magic && !m[1].magic {
		return m, fmt.Errorf("snapshot %s: %w: not a bbolt database", path, ErrNotSnapshot)
	}
	return m, nil
}
