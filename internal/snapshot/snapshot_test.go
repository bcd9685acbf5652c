package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/twochoice/twochoice/internal/testutil"
)

type entry struct {
	key    string
	value  []byte
	expiry int64
	bucket int64
}

func sampleEntries(n int, seed uint64) []entry {
	r := rand.New(rand.NewPCG(seed, 1))
	es := make([]entry, n)
	for i := range es {
		v := make([]byte, r.IntN(200))
		for j := range v {
			v[j] = byte(r.Uint32())
		}
		es[i] = entry{fmt.Sprintf("key-%d-%x", i, r.Uint32()), v, int64(r.Uint64() >> 2), int64(r.IntN(1000)) - 1}
	}
	return es
}

// sampleMeta returns metadata for n records whose claims agree with each
// other (Open checks them): up to 3 in the stash, the others packed 8 to a
// bucket in the first of two parts.
func sampleMeta(n int) Meta {
	stash := min(uint64(n), 3)
	keys := uint64(n) - stash
	buckets := max(1000, 2*(keys/8+2))
	part0 := make([]uint64, 9)
	part0[8] = keys / 8
	part0[keys%8]++
	part0[0] += buckets/2 - part0[8] - 1
	part1 := make([]uint64, 9)
	part1[0] = buckets - buckets/2
	return Meta{KeyType: "string", ValueType: "[]uint8", Placement: "goleft", Choices: 2, BucketSize: 8,
		Hash: "xxhash", Seed: 42, Buckets: buckets, Stash: stash, Created: time.Now().UnixNano(),
		Histogram: [][]uint64{part0, part1}}
}

// write saves es as a snapshot at path and returns the metadata written.
func write(t *testing.T, path string, es []entry) Meta {
	t.Helper()
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	enc := NewEncoder[string, []byte]()
	for _, e := range es {
		b, err := enc.EncodeRecord(e.key, e.value, e.expiry, e.bucket)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Append(b); err != nil {
			t.Fatal(err)
		}
	}
	m := sampleMeta(len(es))
	if err := w.Commit(m); err != nil {
		t.Fatal(err)
	}
	return m
}

// read opens path and returns its metadata and entries, or the first error.
func read(path string) (Meta, []entry, error) {
	r, err := Open(path, 100*time.Millisecond)
	if err != nil {
		return Meta{}, nil, err
	}
	defer r.Close()
	dec := NewDecoder[string, []byte]()
	var es []entry
	err = r.ForEach(func(rec []byte) error {
		k, v, exp, b, err := dec.DecodeRecord(rec)
		es = append(es, entry{k, v, exp, b})
		return err
	})
	return r.Meta(), es, err
}

func sameEntries(a, b []entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].key != b[i].key || !bytes.Equal(a[i].value, b[i].value) || a[i].expiry != b[i].expiry || a[i].bucket != b[i].bucket {
			return false
		}
	}
	return true
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "snap.db")
	// Enough bytes for several transactions.
	es := sampleEntries(60_000, 1)
	want := write(t, path, es)
	m, got, err := read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !sameEntries(es, got) {
		t.Fatal("records differ after a round trip")
	}
	if m.Entries != uint64(len(es)) || m.Version != Version || m.Checksum == 0 || m.Seed != want.Seed ||
		!reflect.DeepEqual(m.Histogram, want.Histogram) || m.Created != want.Created {
		t.Fatalf("meta = %+v", m)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*"))
	if len(leftovers) != 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
	// Schema-free decoding, as inspect does.
	r, _ := Open(path, 0)
	defer r.Close()
	i := 0
	if err := r.ForEach(func(rec []byte) error {
		a, err := DecodeAny(rec)
		if err != nil {
			return err
		}
		if a.Key != es[i].key || !bytes.Equal(a.Value.([]byte), es[i].value) || a.Bucket != es[i].bucket {
			return fmt.Errorf("record %d decodes as %+v", i, a)
		}
		i++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestTypedRecords(t *testing.T) {
	type point struct {
		X, Y int
		Tags []string
	}
	enc := NewEncoder[uint64, point]()
	b, err := enc.EncodeRecord(7, point{1, -2, []string{"a"}}, 5, StashBucket)
	if err != nil {
		t.Fatal(err)
	}
	k, v, exp, bkt, err := NewDecoder[uint64, point]().DecodeRecord(b)
	if err != nil || k != 7 || v.X != 1 || v.Y != -2 || v.Tags[0] != "a" || exp != 5 || bkt != StashBucket {
		t.Fatalf("got %v %+v %v %v %v", k, v, exp, bkt, err)
	}
	// A record of other types does not decode quietly into the wrong ones.
	if _, _, _, _, err := NewDecoder[uint64, point]().DecodeRecord([]byte{0x94, 0xa1, 'x', 0x01, 0x00, 0x00}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("string key into uint64: %v", err)
	}
}

func TestReplaceAndAbort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	first := sampleEntries(100, 2)
	write(t, path, first)
	second := sampleEntries(50, 3)
	write(t, path, second)
	if _, got, err := read(path); err != nil || !sameEntries(got, second) {
		t.Fatalf("after a second Commit: %v", err)
	}
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewEncoder[string, []byte]().EncodeRecord("x", nil, 0, 0)
	w.Append(b)
	w.Abort()
	if _, got, err := read(path); err != nil || !sameEntries(got, second) {
		t.Fatalf("after an Abort the old snapshot must stand: %v", err)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "nope.db"), 0); !errors.Is(err, ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	text := filepath.Join(dir, "text.db")
	os.WriteFile(text, bytes.Repeat([]byte("not a database\n"), 1000), 0o644)
	if _, err := Open(text, 0); !errors.Is(err, ErrNotSnapshot) {
		t.Errorf("text file: %v", err)
	}
	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o644)
	if _, err := Open(empty, 0); !errors.Is(err, ErrNotSnapshot) && !errors.Is(err, ErrCorrupt) {
		t.Errorf("empty file: %v", err)
	}
	if _, err := Open(dir, 0); !errors.Is(err, ErrNotSnapshot) {
		t.Errorf("a directory: %v", err)
	}
	// A bbolt database that is not a snapshot.
	other := filepath.Join(dir, "other.db")
	db, _ := bolt.Open(other, 0o644, nil)
	db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("users")); return err })
	db.Close()
	if _, err := Open(other, 0); !errors.Is(err, ErrNotSnapshot) {
		t.Errorf("foreign bbolt file: %v", err)
	}
	// An unfinished snapshot: entries but no metadata.
	half := filepath.Join(dir, "half.db")
	db, _ = bolt.Open(half, 0o644, nil)
	db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket(bucketEntries); return err })
	db.Close()
	if _, err := Open(half, 0); !errors.Is(err, ErrCorrupt) {
		t.Errorf("unfinished snapshot: %v", err)
	}
	// A newer format.
	newer := filepath.Join(dir, "newer.db")
	write(t, newer, sampleEntries(3, 4))
	db, _ = bolt.Open(newer, 0o644, nil)
	db.Update(func(tx *bolt.Tx) error {
		var v [4]byte
		binary.BigEndian.PutUint32(v[:], Version+1)
		return tx.Bucket(bucketMeta).Put(keyVersion, v[:])
	})
	db.Close()
	if _, err := Open(newer, 0); !errors.Is(err, ErrNewerVersion) {
		t.Errorf("newer version: %v", err)
	}
	// Records that disagree with the metadata's count.
	short := filepath.Join(dir, "short.db")
	write(t, short, sampleEntries(10, 5))
	db, _ = bolt.Open(short, 0o644, nil)
	db.Update(func(tx *bolt.Tx) error {
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], 9)
		return tx.Bucket(bucketEntries).Delete(k[:])
	})
	db.Close()
	if _, _, err := read(short); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a record missing: %v", err)
	}
}

func TestLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	write(t, path, sampleEntries(5, 6))
	db, err := bolt.Open(path, 0o644, nil) // read-write: an exclusive lock
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	_, err = Open(path, 200*time.Millisecond)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("locked file: %v", err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("gave up after %v, before the timeout", d)
	}
}

// Every truncation of a snapshot fails cleanly (no panic, no fault) with a
// sentinel error.
func TestTruncated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.db")
	es := sampleEntries(3000, 7)
	write(t, path, es)
	full, _ := os.ReadFile(path)
	cut := filepath.Join(dir, "cut.db")
	step := len(full) / 97
	for n := 0; n < len(full); n += step {
		os.WriteFile(cut, full[:n], 0o644)
		_, got, err := read(cut)
		if err == nil {
			if !sameEntries(got, es) {
				t.Fatalf("truncated to %d of %d bytes: read succeeded with different records", n, len(full))
			}
			continue
		}
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotSnapshot) {
			t.Fatalf("truncated to %d of %d bytes: %v", n, len(full), err)
		}
	}
}

// A flipped bit anywhere either leaves the records readable and identical
// (the bit was in free space) or is reported; it never yields other data.
func TestBitFlips(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.db")
	es := sampleEntries(2000, 8)
	write(t, path, es)
	full, _ := os.ReadFile(path)
	flipped := filepath.Join(dir, "flip.db")
	r := rand.New(rand.NewPCG(9, 9))
	trials := 400
	if testing.Short() {
		trials = 60
	}
	detected := 0
	for range trials {
		b := bytes.Clone(full)
		pos := r.IntN(len(b))
		b[pos] ^= 1 << r.IntN(8)
		os.WriteFile(flipped, b, 0o644)
		_, got, err := read(flipped)
		switch {
		case err == nil:
			if !sameEntries(got, es) {
				t.Fatalf("flip at byte %d: read succeeded with different records", pos)
			}
		case errors.Is(err, ErrCorrupt), errors.Is(err, ErrNotSnapshot), errors.Is(err, ErrNewerVersion):
			detected++
		default:
			t.Fatalf("flip at byte %d: %v", pos, err)
		}
	}
	t.Logf("%d of %d flips detected; the rest fell in free space", detected, trials)
}

// A full disk fails the write with ErrNoSpace, removes the temporary file
// and leaves the previous snapshot whole. It needs a small file system,
// which root can mount.
func TestDiskFull(t *testing.T) {
	dir := testutil.SmallTmpfs(t, "2m")
	path := filepath.Join(dir, "s.db")
	small := sampleEntries(100, 10)
	write(t, path, small)
	w, err := Create(path)
	if err == nil {
		enc := NewEncoder[string, []byte]()
		big := bytes.Repeat([]byte{7}, 4000)
		for i := 0; err == nil && i < 10_000; i++ {
			var b []byte
			b, _ = enc.EncodeRecord(fmt.Sprint(i), big, 0, 0)
			err = w.Append(b)
		}
		if err == nil {
			err = w.Commit(sampleMeta(int(w.Records())))
		} else {
			w.Abort()
		}
	}
	if !errors.Is(err, ErrNoSpace) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("writing 40 MB into 2 MB: %v", err)
	}
	if _, got, err := read(path); err != nil || !sameEntries(got, small) {
		t.Fatalf("the previous snapshot did not survive: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// FuzzOpen opens damaged snapshots: any bytes, one of them flipped by xor
// at pos. Open and ForEach must fail with a sentinel error or succeed; and
// on a damaged copy of the seed snapshot (a prefix of it, one byte
// flipped), a ForEach that succeeds must have given exactly the records
// written: the count and checksum are there to catch anything else.
//
//	go test -run '^$' -fuzz '^FuzzOpen$' -fuzzminimizetime 200x ./internal/snapshot
func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "seed.db")
	w, _ := Create(path)
	enc := NewEncoder[string, []byte]()
	written := sampleEntries(50, 11)
	for _, e := range written {
		b, _ := enc.EncodeRecord(e.key, e.value, e.expiry, e.bucket)
		w.Append(b)
	}
	w.Commit(sampleMeta(50))
	seed, _ := os.ReadFile(path)
	f.Add(seed, uint32(0), uint8(0))
	f.Add(seed, uint32(4096), uint8(1))
	f.Add(seed, uint32(len(seed)/2), uint8(0x80))
	f.Add(seed[:len(seed)-50], uint32(0), uint8(0))
	f.Fuzz(func(t *testing.T, file []byte, pos uint32, xor uint8) {
		fromSeed := len(file) > 0 && bytes.HasPrefix(seed, file)
		if len(file) > 0 {
			file = bytes.Clone(file)
			file[int(pos)%len(file)] ^= xor
		}
		p := filepath.Join(t.TempDir(), "f.db")
		os.WriteFile(p, file, 0o644)
		r, err := Open(p, 50*time.Millisecond)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotSnapshot) && !errors.Is(err, ErrNewerVersion) {
				t.Fatalf("Open: unexpected error %v", err)
			}
			return
		}
		defer r.Close()
		dec := NewDecoder[string, []byte]()
		var got []entry
		err = r.ForEach(func(rec []byte) error {
			if _, err := DecodeAny(rec); err != nil {
				return err
			}
			k, v, exp, b, err := dec.DecodeRecord(rec)
			got = append(got, entry{k, v, exp, b})
			return err
		})
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("ForEach: unexpected error %v", err)
		}
		if err == nil && fromSeed && !sameEntries(got, written) {
			t.Fatalf("ForEach gave %d records from a damaged copy of %d, not the ones written", len(got), len(written))
		}
	})
}

// A snapshot that replaces another keeps its permissions: a file made
// private (its keys may be anyone's data) stays private after the next
// save, and one made read-only stays read-only.
func TestReplaceKeepsPermissions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	write(t, path, sampleEntries(10, 12))
	for _, perm := range []fs.FileMode{0o600, 0o640, 0o444} {
		if err := os.Chmod(path, perm); err != nil {
			t.Fatal(err)
		}
		// While it is written, the successor is the writer's alone.
		w, err := Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(w.tmp); err != nil || fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("the temporary file replacing a %v one: %v, %v", perm, fi.Mode(), err)
		}
		w.Abort()
		es := sampleEntries(20, uint64(perm))
		write(t, path, es)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != perm {
			t.Errorf("replacing a %v snapshot left a %v one", perm, got)
		}
		if _, got, err := read(path); err != nil || !sameEntries(got, es) {
			t.Fatalf("%v: %v", perm, err)
		}
	}
}

// A damaged page can give a key's value any length, up to 4 GiB, pointing
// past the file: the reader must call that corrupt at once, not read,
// decode or quote gigabytes (the fuzzer's find: the format value's length
// set to 0x6e000012 made Open quote 1.8 GB into its error message, and
// run out of memory). Each test patches the length of one value of the
// meta bucket, or of the first record, in the leaf element that holds it.
func TestHugeValueLength(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.db")
	write(t, path, sampleEntries(10, 3))
	full, _ := os.ReadFile(path)
	first := make([]byte, 8) // the first record's key: record 0
	for _, c := range []struct{ name, key, val string }{
		{"format", "format", FormatName},
		{"version", "version", ""},
		{"meta", "meta", ""},
		{"record 0", string(first), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := bytes.Clone(full)
			if !patchValueLength(b, []byte(c.key), []byte(c.val), 0x6e000012) {
				t.Fatalf("no leaf element for key %q found", c.key)
			}
			p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "")+".db")
			os.WriteFile(p, b, 0o644)
			_, _, err := read(p)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
			if len(err.Error()) > 500 {
				t.Fatalf("error of %d bytes: %.200s…", len(err.Error()), err)
			}
			t.Log(err)
		})
	}
}

// patchValueLength finds in a bbolt file the leaf element (flags, pos,
// ksize, vsize, 4 bytes each, pos counted from the element) of the first
// key equal to key whose value starts with val, and sets its value length
// to n. It reports whether it found one.
func patchValueLength(b, key, val []byte, n uint32) bool {
	for at := 0; ; {
		i := bytes.Index(b[at:], append(slices.Clone(key), val...))
		if i < 0 {
			return false
		}
		k := at + i
		for e := k - 16; e >= 0 && e >= k-4096; e-- {
			pos := binary.LittleEndian.Uint32(b[e+4:])
			ksize := binary.LittleEndian.Uint32(b[e+8:])
			if uint64(e)+uint64(pos) == uint64(k) && int(ksize) == len(key) && binary.LittleEndian.Uint32(b[e:]) == 0 {
				binary.LittleEndian.PutUint32(b[e+12:], n)
				return true
			}
		}
		at = k + 1
	}
}
