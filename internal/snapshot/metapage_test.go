package snapshot

import (
	"encoding/binary"
	"errors"
	"hash/fnv"
	"os"
	"path/filepath"
	"testing"
)

// A damaged meta page is ErrCorrupt when the state left holds no snapshot
// (the only complete state of a one-transaction snapshot, the last of a
// longer one), and reads whole when it is the other page; both pages
// damaged is ErrCorrupt, and a sound bbolt file of another format version
// is not a snapshot.
func TestDamagedMetaPage(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.db")
	smallEntries := sampleEntries(100, 3)
	write(t, small, smallEntries)
	long := filepath.Join(dir, "long.db")
	longEntries := sampleEntries(40_000, 4) // two transactions of TxBytes
	write(t, long, longEntries)
	// A meta page is a 16-byte page header, then the meta: magic number
	// (4 bytes), version (4), page size, flags, root (16), free list,
	// high-water mark, transaction id (8 each at 32, 40 and 48), and
	// FNV-64a of the 56 bytes before it.
	const meta, version, pageSizeAt, txidAt, summed = 16, 4, 8, 48, 56
	// The second page is one page in: the OS's page size, as the first
	// page says.
	ps := int(binary.LittleEndian.Uint32(mustRead(t, small)[meta+pageSizeAt:]))
	// The page of the last transaction: its id is the higher.
	txid := func(b []byte, page int) uint64 { return binary.LittleEndian.Uint64(b[page+meta+txidAt:]) }
	last := func(b []byte) int {
		if txid(b, ps) > txid(b, 0) {
			return ps
		}
		return 0
	}
	// resum recomputes the checksum of the meta page at page.
	resum := func(b []byte, page int) {
		m := b[page+meta:]
		h := fnv.New64a()
		h.Write(m[:summed])
		binary.LittleEndian.PutUint64(m[summed:], h.Sum64())
	}
	lastTxid := func(path string) uint64 {
		b := mustRead(t, path)
		return max(txid(b, 0), txid(b, ps))
	}
	if lastTxid(long) <= lastTxid(small) {
		t.Fatal("the long snapshot was written in no more transactions than the short one")
	}
	cases := []struct {
		name   string
		from   string
		change func(b []byte)
		want   error // nil: reads whole
		es     []entry
	}{
		{"small: checksum of the last page", small, func(b []byte) { b[last(b)+72] ^= 1 }, ErrCorrupt, nil},
		{"small: high-water mark of the last page", small, func(b []byte) { b[last(b)+60] ^= 1 }, ErrCorrupt, nil},
		{"small: root's sequence of the last page", small, func(b []byte) { b[last(b)+40] ^= 1 }, ErrCorrupt, nil},
		{"small: version of the last page", small, func(b []byte) { b[last(b)+20] ^= 1 }, ErrCorrupt, nil},
		{"small: the other page", small, func(b []byte) { b[ps-last(b)+72] ^= 1 }, nil, smallEntries},
		{"long: the last page", long, func(b []byte) { b[last(b)+72] ^= 1 }, ErrCorrupt, nil},
		{"long: the other page", long, func(b []byte) { b[ps-last(b)+60] ^= 1 }, nil, longEntries},
		{"both pages", small, func(b []byte) { clear(b[16:20]); b[ps+72] ^= 1 }, ErrCorrupt, nil},
		{"another bbolt format version", small, func(b []byte) {
			for _, page := range []int{0, ps} {
				binary.LittleEndian.PutUint32(b[page+meta+version:], 3) // bbolt writes 2
				resum(b, page)
			}
		}, ErrNotSnapshot, nil},
	}
	for _, tc := range cases {
		b := mustRead(t, tc.from)
		tc.change(b)
		p := filepath.Join(dir, "damaged.db")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, es, err := read(p)
		switch {
		case tc.want == nil && (err != nil || !sameEntries(es, tc.es)):
			t.Errorf("%s: %v, %d records; want the %d written", tc.name, err, len(es), len(tc.es))
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// mustRead returns the bytes of the file at path.
func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
