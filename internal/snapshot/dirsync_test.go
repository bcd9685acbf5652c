package snapshot

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A directory sync that fails after the rename says what happened: the
// new snapshot is in place, whole, but a crash may still bring back the
// previous one. The error is ErrNotDurable, not ErrWrite or ErrNoSpace,
// whose doc promises the previous snapshot untouched; the system's error
// is still wrapped. (The directory sync has to follow the rename: it is
// what makes the rename durable.)
func TestDirSyncFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	write(t, path, sampleEntries(10, 30))
	defer func(f func(string) error) { syncDirFunc = f }(syncDirFunc)
	for _, sysErr := range []error{syscall.EIO, syscall.ENOSPC} {
		syncDirFunc = func(string) error { return sysErr }
		w, err := Create(path)
		if err != nil {
			t.Fatal(err)
		}
		es := sampleEntries(20, 31)
		enc := NewEncoder[string, []byte]()
		for _, e := range es {
			b, _ := enc.EncodeRecord(e.key, e.value, e.expiry, e.bucket)
			if err := w.Append(b); err != nil {
				t.Fatal(err)
			}
		}
		err = w.Commit(sampleMeta(len(es)))
		if !errors.Is(err, ErrNotDurable) || !errors.Is(err, sysErr) || errors.Is(err, ErrWrite) || errors.Is(err, ErrNoSpace) ||
			!strings.Contains(err.Error(), path) || strings.Count(err.Error(), path) != 1 {
			t.Errorf("%v: Commit = %v; want ErrNotDurable and the system's error, naming the file once", sysErr, err)
		}
		if _, got, err := read(path); err != nil || !sameEntries(got, es) {
			t.Errorf("%v: the new snapshot is not in place: %v", sysErr, err)
		}
	}
}
