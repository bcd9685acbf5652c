package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/snapshot"
	"github.com/twochoice/twochoice/internal/testutil"
)

// craftSnapshot writes a snapshot of keys (key i with value i) that
// describes a table of n buckets under the options of s: each key in its
// first candidate with room there, as Save would write a store that grew
// to n buckets and then lost all but these keys. It needs no table of n
// buckets, so n can be 2^32.
func craftSnapshot(t *testing.T, path string, s kv[string, int], keys []string, n uint64) {
	t.Helper()
	o := s.options()
	gen, err := o.Placement.Generator(n, o.Choices)
	if err != nil {
		t.Fatal(err)
	}
	w, err := snapshot.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	enc := snapshot.NewEncoder[string, int]()
	loads := make(map[uint64]int)
	for i, k := range keys {
		var c [hashfn.MaxChoices]uint64
		gen.Fill(s.hashOf(k), c[:])
		b := c[0]
		for _, x := range c[:o.Choices] {
			if loads[x] < o.BucketSize {
				b = x
				break
			}
		}
		loads[b]++
		rec, err := enc.EncodeRecord(k, i, 0, int64(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Append(rec); err != nil {
			t.Fatal(err)
		}
	}
	hist := make([][]uint64, o.Placement.Parts(o.Choices))
	for p := range hist {
		hist[p] = make([]uint64, o.BucketSize+1)
		lo, hi := gen.PartBounds(p)
		hist[p][0] = hi - lo
	}
	for b, l := range loads {
		hist[gen.PartOf(b)][0]--
		hist[gen.PartOf(b)][l]++
	}
	err = w.Commit(snapshot.Meta{KeyType: "string", ValueType: "int", Placement: o.Placement.String(), Choices: o.Choices,
		BucketSize: o.BucketSize, Hash: o.Hash.String(), Seed: o.Seed, Buckets: n, Histogram: hist})
	if err != nil {
		t.Fatal(err)
	}
}

// allocatedBy returns the bytes f allocated on the heap.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A snapshot whose table is 2^32 buckets (hundreds of gigabytes) beside a
// few records opens with little memory: a doctored table size is refused
// with ErrCorrupt naming the file, and a table that the records agree
// with (as a store that grew and then lost its keys would save) opens
// into a store holding those keys in a table sized for them, never
// allocating the whole table first.
func TestOpenHugeTable(t *testing.T) {
	const limit = 64 << 20
	dir := t.TempDir()
	for _, o := range []Options{{Seed: 5}, {Placement: bucket.DChoice, Choices: 3, Seed: 6}, {Placement: bucket.DoubleHash, Choices: 2, BucketSize: 4, Hash: 1, Seed: 7}} {
		t.Run(name(o), func(t *testing.T) {
			s := newTestStore[string, int](t, o)
			keys := make([]string, 300)
			for i := range keys {
				keys[i] = fmt.Sprint("key-", i)
				s.Set(keys[i], i)
			}
			// Double hashing takes a prime or a power of two.
			n := uint64(hashfn.MaxBuckets)
			if s.options().Placement.Scheme() == hashfn.Parts {
				n -= n % uint64(s.options().Choices)
			}
			crafted := filepath.Join(dir, name(o)+"-crafted.snap")
			craftSnapshot(t, crafted, s, keys, n)
			var r kv[string, int]
			var err error
			if a := allocatedBy(func() { r, err = Open[string, int](crafted, nil) }); a > limit {
				t.Errorf("Open of a 2^32-bucket table with %d keys allocated %d MiB", len(keys), a>>20)
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			sameContents(t, s, r)
			if err := r.checkInvariants(); err != nil {
				t.Fatal(err)
			}
			if got, want := uint64(r.Report().Buckets), tableFor(cfgOf(r), uint64(len(keys))); got != want {
				t.Errorf("restored into %d buckets, want %d", got, want)
			}

			// The same file, doctored: the records were placed for a
			// table of about 2^32 buckets, the metadata says half as many
			// (a size the rule accepts, the histogram made to agree).
			doctored := filepath.Join(dir, name(o)+"-doctored.snap")
			craftSnapshot(t, doctored, s, keys, n)
			half := n / 2
			if s.options().Placement.Scheme() == hashfn.Parts {
				half -= half % uint64(s.options().Choices)
			}
			rewriteMeta(t, doctored, func(m *snapshot.Meta) {
				parts := uint64(len(m.Histogram))
				for p := range m.Histogram {
					m.Histogram[p][0] -= (n - half) / parts
				}
				m.Histogram[0][0] -= (n - half) % parts
				m.Buckets = half
			}, 0)
			if a := allocatedBy(func() { r, err = Open[string, int](doctored, nil) }); a > limit {
				t.Errorf("Open of a doctored table size allocated %d MiB", a>>20)
			}
			if r != nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), doctored) {
				t.Errorf("doctored table size: %v, %v; want ErrCorrupt naming the file", r != nil, err)
			}
		})
	}
}

// A store that grew and then lost most of its keys reopens with its keys,
// in a table sized for them once its own is over sparseFloor (lowered
// here), and in place below it.
func TestOpenSparseStore(t *testing.T) {
	s := grownAndEmptied(t, 8, 50_000, 100)
	r, _ := saveOpen(t, s, nil)
	sameReport(t, s.Report(), r.Report()) // in place: a few MiB
	defer func(f uint64) { sparseFloor = f }(sparseFloor)
	sparseFloor = 1 << 10
	r, _ = saveOpen(t, s, nil)
	sameContents(t, s, r)
	if got, want := uint64(r.Report().Buckets), tableFor(cfgOf(r), uint64(s.Len())); got != want || got >= uint64(s.Report().Buckets)/sparseFactor {
		t.Errorf("restored into %d buckets, want %d (the saved table had %d)", got, want, s.Report().Buckets)
	}
	// Still a store that grows.
	for i := range 50_000 {
		r.Set(fmt.Sprint("new", i), i)
	}
	if err := r.checkInvariants(); err != nil {
		t.Fatal(err)
	}
}

// A cache's table is allocated once by Open: Open allocates about what
// one table of the size it restores takes, not two.
func TestOpenCacheAllocatesOnce(t *testing.T) {
	o := Options{MaxEntries: 1 << 18, Seed: 9}
	s, err := New[uint64, uint64](o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range uint64(1 << 17) {
		s.Set(i, i)
	}
	c := s.(*Cache[uint64, uint64])
	saved := c.tab.Load()
	one := allocatedBy(func() { newCacheTable[uint64, uint64](&c.cfg, c.lay, saved.n, c.tq) })
	path := filepath.Join(t.TempDir(), "c.snap")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	var r kv[uint64, uint64]
	// The race detector's instrumentation makes values escape that do not
	// otherwise.
	if a := allocatedBy(func() { r, err = Open[uint64, uint64](path, nil) }); a > one*3/2 && !testutil.Race {
		t.Errorf("Open allocated %d KiB, one table of %d buckets %d KiB", a>>10, saved.n, one>>10)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := r.(*Cache[uint64, uint64]).tab.Load().n; got != saved.n {
		t.Errorf("restored into %d buckets, saved from %d", got, saved.n)
	}
}

// grownAndEmptied returns a store that held the keys 0 to n-1 and then
// lost all but one in every: its table, which never shrinks, is far
// larger than its entries.
func grownAndEmptied(t *testing.T, seed uint64, n, every int) kv[string, int] {
	t.Helper()
	s := newTestMap[string, int](t, MapOptions{Seed: seed})
	for i := range n {
		s.Set(fmt.Sprint(i), i)
	}
	for i := range n {
		if i%every != 0 {
			s.Delete(fmt.Sprint(i))
		}
	}
	return s
}

// craftCache writes a snapshot of a cache of options o (MaxEntries > 0)
// holding the given keys (key i with value i, each in its first candidate
// with room), as Save would write one: a file of a few kilobytes whatever
// the bound it records. It needs no table, so the bound can be
// MaxCacheEntries.
func craftCache(t *testing.T, path string, o Options, keys []string) {
	t.Helper()
	o, err := o.resolve()
	if err != nil {
		t.Fatal(err)
	}
	n, size, short, err := cacheSize(&o)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := o.Placement.Generator(n, o.Choices)
	if err != nil {
		t.Fatal(err)
	}
	fn, err := hashfn.New(o.Hash, o.Seed)
	if err != nil {
		t.Fatal(err)
	}
	hash := newHasher[string](fn)
	w, err := snapshot.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	enc := snapshot.NewEncoder[string, int]()
	loads := make(map[uint64]int)
	for i, k := range keys {
		var c [hashfn.MaxChoices]uint64
		gen.Fill(hash(k), c[:])
		b := c[0]
		for _, x := range c[:o.Choices] {
			room := size
			if x < short {
				room--
			}
			if loads[x] < room {
				b = x
				break
			}
		}
		loads[b]++
		rec, err := enc.EncodeRecord(k, i, 0, int64(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Append(rec); err != nil {
			t.Fatal(err)
		}
	}
	hist := make([][]uint64, o.Placement.Parts(o.Choices))
	for p := range hist {
		hist[p] = make([]uint64, size+1)
		lo, hi := gen.PartBounds(p)
		hist[p][0] = hi - lo
	}
	for b, l := range loads {
		hist[gen.PartOf(b)][0]--
		hist[gen.PartOf(b)][l]++
	}
	err = w.Commit(snapshot.Meta{KeyType: "string", ValueType: "int", Placement: o.Placement.String(), Choices: o.Choices,
		BucketSize: o.BucketSize, Hash: o.Hash.String(), Seed: o.Seed, Buckets: n, MaxEntries: o.MaxEntries, Histogram: hist})
	if err != nil {
		t.Fatal(err)
	}
}

// Crafted files of a few kilobytes that claim huge sizes and counts (a
// cache's bound, a table, entries, a stash) fail with an error, or open
// with little memory, whatever they claim: a cache's final table for 2^24
// string → int entries takes 736 MiB, for 2^28 11.5 GiB, more than many
// machines have (the process dies of it), and a file that claims one
// beside a few records opens into the small table those records need.
func TestOpenCraftedSizes(t *testing.T) {
	const limit = 64 << 20
	dir := t.TempDir()
	keys := []string{"a", "b", "c"}
	cache := func(file string, o Options) string {
		p := filepath.Join(dir, file)
		craftCache(t, p, o, keys)
		return p
	}
	doctored := func(file, from string, change func(m *snapshot.Meta)) string {
		p := filepath.Join(dir, file)
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		rewriteMeta(t, p, change, 0)
		return p
	}
	s := newTestMap[string, int](t, MapOptions{Seed: 5})
	unbounded := filepath.Join(dir, "table.snap")
	craftSnapshot(t, unbounded, s, nil, hashfn.MaxBuckets)
	big := cache("2^28.snap", Options{MaxEntries: MaxCacheEntries, Seed: 3})
	cases := []struct {
		name string
		path string
		want error // nil: opens, holding the keys written
	}{
		{"a cache of 2^24", cache("2^24.snap", Options{MaxEntries: 1 << 24, Seed: 3}), nil},
		{"a cache of 2^28", big, nil},
		{"a cache of 2^28 in buckets of one slot", cache("2^28-1.snap", Options{MaxEntries: MaxCacheEntries, Placement: bucket.DoubleHash, Choices: 3, BucketSize: 1, Seed: 4}), nil},
		{"a cache of 2^28 claiming 2^26 entries", doctored("2^28-full.snap", big, func(m *snapshot.Meta) { m.Entries = 1 << 26 }), ErrCorrupt},
		{"a cache of 2^28 claiming 2^26 entries in its stash", doctored("2^28-stash.snap", big, func(m *snapshot.Meta) { m.Entries, m.Stash = 1<<26, 1<<26 }), ErrCorrupt},
		{"a table of 2^32 buckets", unbounded, nil},
		{"a table of 2^32 buckets claiming 2^40 entries", doctored("table-full.snap", unbounded, func(m *snapshot.Meta) { m.Entries = 1 << 40 }), ErrCorrupt},
	}
	for _, tc := range cases {
		var r kv[string, int]
		var err error
		a := allocatedBy(func() { r, err = Open[string, int](tc.path, nil) })
		fi, _ := os.Stat(tc.path)
		t.Logf("%s: a file of %d bytes; Open allocated %d KiB: %v", tc.name, fi.Size(), a>>10, err)
		if a > limit {
			t.Errorf("%s: Open allocated %d MiB", tc.name, a>>20)
		}
		switch {
		case tc.want == nil && err != nil:
			t.Errorf("%s: Open = %v; want a store", tc.name, err)
		case tc.want == nil:
			want := len(keys)
			if tc.path == unbounded {
				want = 0
			}
			if r.Len() != want {
				t.Errorf("%s: Open gave %d entries, the file holds %d", tc.name, r.Len(), want)
			}
			if c, ok := r.(*Cache[string, int]); ok {
				if err := c.checkInvariants(); err != nil {
					t.Errorf("%s: %v", tc.name, err)
				}
			}
		case r != nil || !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.path):
			t.Errorf("%s: Open = %v, %v; want %v naming the file", tc.name, r != nil, err, tc.want)
		}
	}
}

// A cache that filled and then lost most of its entries, whose table is
// over sparseFloor (lowered here), is restored into the table on its path
// that holds its entries, and grows from there; saved a quarter full, it
// is restored in place.
func TestOpenNearlyEmptyCache(t *testing.T) {
	defer func(f uint64) { sparseFloor = f }(sparseFloor)
	sparseFloor = 1 << 10
	const bound = 1 << 14
	s := newTestCache(t, CacheOptions[string, int]{MaxEntries: bound, Seed: 11})
	for i := range bound {
		s.Set(fmt.Sprint("key-", i), i)
	}
	for i := range bound {
		if i%64 != 0 {
			s.Delete(fmt.Sprint("key-", i))
		}
	}
	saved := s.tab.Load().n
	r, _ := saveOpen(t, s, nil)
	sameContents(t, s, r)
	c := r.(*Cache[string, int])
	o := c.options()
	if got, want := c.tab.Load().n, sizesFor(&o, int64(s.Len()))[0]; got != want || got >= saved/sparseFactor {
		t.Errorf("restored into %d buckets, want %d (the saved table had %d)", got, want, saved)
	}
	for i := range bound {
		r.Set(fmt.Sprint("new-", i), i)
	}
	if err := c.checkInvariants(); err != nil {
		t.Fatal(err)
	}
	if r.Len() < bound*9/10 {
		t.Errorf("refilled, the restored cache holds %d of %d", r.Len(), bound)
	}

	for i := 0; s.Len() < bound/sparseFactor; i++ {
		s.Set(fmt.Sprint("more-", i), i)
	}
	r, _ = saveOpen(t, s, nil)
	sameContents(t, s, r)
	if got := r.(*Cache[string, int]).tab.Load().n; got != saved {
		t.Errorf("a quarter full: restored into %d buckets, saved from %d", got, saved)
	}
}

// FuzzOpenBounds opens files that are sound snapshots in all but their
// claims: the input gives a cache's bound, the table size (0: the size
// the options give), entries and stash entries claimed beyond the
// records written, the rule, d, the bucket size, and the number of
// records (each in its first candidate with room in the table claimed).
// Open must fail with one of its sentinel errors or give a sound store
// holding the records, and must allocate at most openBytesPerFileByte
// times the file's size, plus openBytesSlack: with sparseFloor lowered
// to 1 MiB, a table or a cache's table larger than that must be accounted
// for by the entries the file claims, which its size bounds. The seeds
// are the crafted files of TestOpenCraftedSizes and sound snapshots.
//
//	go test -run '^$' -fuzz '^FuzzOpenBounds$' -fuzzminimizetime 200x ./store
func FuzzOpenBounds(f *testing.F) {
	type claims struct {
		maxEntries                int64
		buckets, entries, stash   uint64
		rule, choices, bucketSize uint8
		records                   uint8
	}
	goleft, double := uint8(bucket.GoLeft), uint8(bucket.DoubleHash)
	for _, c := range []claims{
		{maxEntries: 1 << 24, rule: goleft, choices: 2, bucketSize: 8, records: 3},
		{maxEntries: MaxCacheEntries, rule: goleft, choices: 2, bucketSize: 8, records: 3},
		{maxEntries: MaxCacheEntries, rule: double, choices: 3, bucketSize: 1, records: 3},
		{maxEntries: MaxCacheEntries, entries: 1 << 26, rule: goleft, choices: 2, bucketSize: 8, records: 3},
		{maxEntries: MaxCacheEntries, entries: 1 << 26, stash: 1 << 26, rule: goleft, choices: 2, bucketSize: 8, records: 3},
		{maxEntries: 1 << 31, rule: goleft, choices: 2, bucketSize: 8, records: 3},
		{buckets: hashfn.MaxBuckets, rule: goleft, choices: 2, bucketSize: 8, records: 3},
		{buckets: hashfn.MaxBuckets, entries: 1 << 40, rule: goleft, choices: 2, bucketSize: 8, records: 3},
		{entries: 1 << 20, rule: uint8(bucket.OneChoice), choices: 1, bucketSize: 1, records: 100},
		{entries: 1000, rule: uint8(bucket.OneChoice), choices: 1, bucketSize: 1, records: 100},
		{maxEntries: 4000, entries: 997, rule: double, choices: 3, bucketSize: 1, records: 3},
		{rule: goleft, choices: 2, bucketSize: 8, records: 200},
		{maxEntries: 300, rule: uint8(bucket.Halves), choices: 3, bucketSize: 4, records: 200},
	} {
		f.Add(c.maxEntries, c.buckets, c.entries, c.stash, c.rule, c.choices, c.bucketSize, c.records)
	}
	defer func(fl uint64) { sparseFloor = fl }(sparseFloor)
	sparseFloor = 1 << 20
	f.Fuzz(func(t *testing.T, maxEntries int64, buckets, entries, stash uint64, rule, choices, bucketSize, records uint8) {
		o := Options{MaxEntries: int(maxEntries), Placement: bucket.Placement(rule % uint8(len(bucket.Placements()))),
			Choices: int(choices), BucketSize: int(bucketSize), Seed: 7}
		path := filepath.Join(t.TempDir(), "f.snap")
		craftClaims(t, path, o, buckets, min(entries, 1<<62), min(stash, 1<<62), int(records))
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		var r kv[string, int]
		a := allocatedBy(func() { r, err = Open[string, int](path, nil) })
		if limit := openBytesPerFileByte*uint64(fi.Size()) + openBytesSlack; a > limit {
			t.Fatalf("Open of a file of %d bytes allocated %d KiB, more than %d KiB (%v)", fi.Size(), a>>10, limit>>10, err)
		}
		if err != nil {
			for _, want := range []error{ErrCorrupt, ErrOptions} {
				if errors.Is(err, want) && strings.Contains(err.Error(), path) {
					return
				}
			}
			t.Fatalf("unexpected error: %v", err)
		}
		if err := r.checkInvariants(); err != nil {
			t.Fatalf("opened into a broken store: %v", err)
		}
		if r.Len() != int(records) {
			t.Fatalf("opened into %d entries, want the %d records", r.Len(), records)
		}
	})
}

// What Open may allocate for a file of s bytes (FuzzOpenBounds, with
// sparseFloor at 1 MiB): openBytesPerFileByte × s + openBytesSlack. A
// file of s bytes claims at most s/24 entries; a table restored in place
// is at most sparseFactor times the size they need, which under one
// choice and buckets of one slot (a utilization of 0.05, and buckets
// that keep room for 8) is some 17 KB an entry, about 700 bytes a byte
// of file; a cache's bound is at most sparseFactor times its entries, at
// most some 1.5 KB an entry.
const (
	openBytesPerFileByte = 1024
	openBytesSlack       = 8 << 20
)

// craftClaims writes a snapshot at path of records keys (key i with
// value i) under options o, whose metadata claims a table of buckets
// buckets (0: the size a store or cache of o holding the keys has), and
// entries and stash entries beyond the records; the histogram counts the
// records' buckets and the extra entries in full buckets of the first
// part (and one bucket for the rest). Claims the options cannot have give a histogram of one part and
// load, for Open to refuse.
func craftClaims(t *testing.T, path string, o Options, buckets, entries, stash uint64, records int) {
	t.Helper()
	w, err := snapshot.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	m := snapshot.Meta{KeyType: "string", ValueType: "int", Placement: o.Placement.String(), Choices: o.Choices,
		BucketSize: o.BucketSize, Hash: o.Hash.String(), Seed: o.Seed, Buckets: buckets, MaxEntries: o.MaxEntries,
		Histogram: [][]uint64{{buckets}}}
	ro, err := o.resolve()
	var gen hashfn.Generator
	if err == nil {
		m.Placement, m.Choices, m.BucketSize = ro.Placement.String(), ro.Choices, ro.BucketSize
		size, short := ro.BucketSize, uint64(0)
		if ro.MaxEntries > 0 {
			var n uint64
			n, size, short, err = cacheSize(&ro)
			if m.Buckets == 0 {
				m.Buckets = n
			}
		} else if m.Buckets == 0 {
			m.Buckets = tableFor(&ro, uint64(records))
		}
		if err == nil {
			gen, err = ro.Placement.Generator(m.Buckets, ro.Choices)
		}
		if err == nil {
			fn, _ := hashfn.New(ro.Hash, ro.Seed)
			m.Histogram = placeClaims(t, w, &ro, &gen, newHasher[string](fn), size, short, records, &m.Stash)
		}
	}
	m.Stash += stash
	if len(m.Histogram) > 0 && len(m.Histogram[0]) > 1 {
		// The extra entries, in full buckets of the first part (as many
		// as it has).
		row := m.Histogram[0]
		full := uint64(len(row) - 1)
		extra := entries - min(entries, stash)
		moved := min(extra/full, row[0])
		row[0] -= moved
		row[full] += moved
		if rem := extra % full; rem > 0 && row[0] > 0 {
			row[0]--
			row[rem]++
		}
	}
	if err := w.Commit(m); err != nil {
		t.Fatal(err)
	}
	if entries > 0 {
		rewriteMeta(t, path, func(m *snapshot.Meta) { m.Entries += entries }, 0)
	}
}

// placeClaims appends records keys to w, each in its first candidate with
// room in gen's table (buckets of size slots, the first short ones one
// fewer), or the stash when all are full, counting those in *stashed; it
// returns the histogram of the table.
func placeClaims(t *testing.T, w *snapshot.Writer, o *Options, gen *hashfn.Generator, hash func(string) uint64, size int, short uint64, records int, stashed *uint64) [][]uint64 {
	t.Helper()
	enc := snapshot.NewEncoder[string, int]()
	loads := make(map[uint64]int)
	for i := range records {
		k := fmt.Sprint("key-", i)
		var c [hashfn.MaxChoices]uint64
		gen.Fill(hash(k), c[:])
		b := int64(snapshot.StashBucket)
		for _, x := range c[:o.Choices] {
			room := size
			if x < short {
				room--
			}
			if loads[x] < room {
				b = int64(x)
				loads[x]++
				break
			}
		}
		if b == snapshot.StashBucket {
			*stashed++
		}
		rec, err := enc.EncodeRecord(k, i, 0, b)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Append(rec); err != nil {
			t.Fatal(err)
		}
	}
	hist := make([][]uint64, o.Placement.Parts(o.Choices))
	for p := range hist {
		hist[p] = make([]uint64, size+1)
		lo, hi := gen.PartBounds(p)
		hist[p][0] = hi - lo
	}
	for b, l := range loads {
		hist[gen.PartOf(b)][0]--
		hist[gen.PartOf(b)][l]++
	}
	return hist
}

// TestOpenLeavesOutEntriesExpiringNow: an entry whose expiry is exactly
// the clock's time when the snapshot is opened has expired (Get would miss
// it), so Open leaves it out: Len counts only the live entries, and the
// restored store passes its invariant checks with a load report that
// matches what it holds.
func TestOpenLeavesOutEntriesExpiringNow(t *testing.T) {
	forEvictConfigs(t, 256, 21, func(t *testing.T, o Options) {
		clk := withFakeClock(&o)
		s := newTestCacheOf[int, int](t, o)
		live := 0
		for k := range 200 {
			if k%2 == 0 {
				s.SetWithTTL(k, k, time.Second)
			} else {
				s.Set(k, k)
			}
		}
		for k := range s.All() {
			if k%2 == 1 {
				live++
			}
		}
		clk.advance(time.Second) // now == every TTL entry's expiry
		r, _ := saveOpen(t, s, &Options{Clock: clk})
		if r.Len() != live {
			t.Fatalf("Open restored %d entries, want the %d without a TTL", r.Len(), live)
		}
		for k := range r.All() {
			if k%2 == 0 {
				t.Fatalf("key %d restored, but it expired as the snapshot was opened", k)
			}
		}
		if got := r.Report().Entries; got != live {
			t.Fatalf("load report of the restored store: %d entries, want %d", got, live)
		}
	})
}

// editedCopy copies the snapshot at src and changes the copy's metadata
// with edit (rewriteMeta), leaving its records as they are.
func editedCopy(t *testing.T, src string, edit func(*snapshot.Meta)) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "edited.snap")
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rewriteMeta(t, dst, edit, 0)
	return dst
}

// TestOpenChecksLoadsAgainstMeta: a snapshot whose records are whole but
// whose metadata tells another story (buckets counted at the wrong loads,
// or a stash of another size) is corrupt, whichever way Open
// restores it: in place, or into a smaller table when the saved one is
// sparse (sparseFloor lowered here).
func TestOpenChecksLoadsAgainstMeta(t *testing.T) {
	s := grownAndEmptied(t, 12, 20_000, 50)
	_, path := saveOpen(t, s, nil)
	edits := map[string]func(*snapshot.Meta){
		// Each edit keeps the metadata consistent with itself and with
		// the number of records (as many buckets and entries), which the
		// reader checks on its own. (With those checks, the loads' match
		// implies the stash's: records = entries = loads + stash.)
		"two buckets at other loads": func(m *snapshot.Meta) {
			row := m.Histogram[0]
			row[1] -= 2
			row[0]++
			row[2]++
		},
		"a key in the stash instead of a bucket": func(m *snapshot.Meta) {
			m.Histogram[0][1]--
			m.Histogram[0][0]++
			m.Stash++
		},
	}
	for _, sparse := range []bool{false, true} {
		for what, edit := range edits {
			t.Run(fmt.Sprintf("sparse=%v/%s", sparse, what), func(t *testing.T) {
				if sparse {
					defer func(f uint64) { sparseFloor = f }(sparseFloor)
					sparseFloor = 1 << 10
				}
				bad := editedCopy(t, path, edit)
				r, err := Open[string, int](bad, nil)
				if r != nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), bad) {
					t.Fatalf("Open of a snapshot with %s in its metadata: %v, %v; want ErrCorrupt naming the file", what, r != nil, err)
				}
			})
		}
	}
}

type rtInner struct{ I int }

// RTEmbedded is exported: the codec cannot set an unexported embedded pointer.
type RTEmbedded struct{ I int }

// rtHidden has unexported fields only: it saves as an empty map.
type rtHidden struct {
	a, b int //lint:ignore U1000 unexported fields, which the codec does not save
}

type rtTree struct {
	Kids  []rtTree
	ByKey map[string]*rtTree
}

type rtAlias = rtInner

type rtKey struct{ A, B int32 }

// Types of every kind the shapes describe come back from their own
// snapshot: no legitimate save and open is refused.
func TestOpenShapesRoundTrip(t *testing.T) {
	type Item struct {
		//lint:ignore U1000 read by the codec, through reflection
		_struct bool `codec:",omitempty"`
		*RTEmbedded
		Hidden rtHidden
		Name   string  `codec:"name,omitempty"`
		J      float64 `json:",omitempty"`
		Arr    [2]rtInner
		ByKey  map[rtKey]rtAlias
		Anon   struct{ X, Y []byte }
		When   time.Time
		Took   time.Duration
		Tree   rtTree
		Box    shapeBox[rtInner]
		Boxes  []shapeBox[shapeBox[time.Time]]
	}
	v := Item{RTEmbedded: &RTEmbedded{I: 1}, Name: "n", J: 2, Arr: [2]rtInner{{3}, {4}}, ByKey: map[rtKey]rtAlias{{1, 2}: {5}},
		When: time.Unix(7, 0).UTC(), Took: time.Second, Tree: rtTree{Kids: []rtTree{{}}, ByKey: map[string]*rtTree{"k": {}}},
		Box: shapeBox[rtInner]{rtInner{6}}}
	v.Anon.X = []byte("x")
	p := saveTyped(t, map[string]Item{"a": v})
	s, err := Open[string, Item](p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := s.Get("a"); !ok || got.I != 1 || got.Name != "n" || got.ByKey[rtKey{1, 2}].I != 5 || !got.When.Equal(v.When) ||
		got.Took != time.Second || len(got.Tree.Kids) != 1 || got.Box.V.I != 6 || !reflect.DeepEqual(got.Arr, v.Arr) {
		t.Fatalf("got %+v, %v; want %+v", got, ok, v)
	}
	if _, err := Open[string, *Item](p, nil); err == nil {
		t.Fatal("opened Item as *Item")
	}
}

// shapeBox is a generic type for the tests below: reflect names an
// instantiation with its type argument's package path in the brackets,
// and a type argument declared in a function with a counter
// (store.shapeBox[store.L·1]).
type shapeBox[T any] struct{ V T }

// A type argument declared in a function is named with a counter that
// the compiler numbers across the package, so that an unrelated local
// type declared earlier in the file renumbers it: the same type of the
// same shape, in the next build, has another name (store.L·1 becomes
// store.L·2). Two block scopes of one test get two counters, as two
// builds would. The counter is not part of the shape, and a snapshot
// restores across it, as a field's type and as the value type itself.
func TestOpenLocalTypeArgument(t *testing.T) {
	t.Run("field", func(t *testing.T) {
		type L struct{ A int }
		type Item struct{ P shapeBox[L] }
		type saved = Item
		kv := map[string]saved{"x": {P: shapeBox[L]{V: L{A: 3}}}}
		{
			type L struct{ A int }
			type Item struct{ P shapeBox[L] }
			got, err := crossOpen[string, saved, string, Item](t, kv, "x")
			if err != nil || !strings.Contains(got, "x={P:{V:{A:3}}}") {
				t.Fatalf("the same shape, its type argument renumbered: %q, %v", got, err)
			}
		}
	})
	t.Run("value type", func(t *testing.T) {
		type L struct{ A int }
		type saved = shapeBox[L]
		kv := map[string]saved{"x": {V: L{A: 4}}}
		{
			type L struct{ A int }
			got, err := crossOpen[string, saved, string, shapeBox[L]](t, kv, "x")
			if err != nil || !strings.Contains(got, "x={V:{A:4}}") {
				t.Fatalf("the same shape, its type argument renumbered: %q, %v", got, err)
			}
		}
	})
}

// Two types of one name in one value type (here two scopes' Item; two
// packages named models would do the same): a reference by name would
// not say which, so only the first of a name is referred to, and a field
// whose type is the other one in the file and the first one here is
// found.
func TestOpenTwoTypesOfOneName(t *testing.T) {
	type Item struct{ X int }
	type first = Item
	{
		type Item struct{ Y string }
		type V struct {
			A first
			B Item
			C first
		}
		type saved = V
		kv := map[string]saved{"v": {C: first{X: 1}}}
		{
			type V struct {
				A first
				B Item
				C Item
			}
			_, err := crossOpen[string, saved, string, V](t, kv, "v")
			if !errors.Is(err, ErrTypeMismatch) || !strings.Contains(err.Error(), "field C") {
				t.Fatalf("field C of the other Item: %v, want ErrTypeMismatch at field C", err)
			}
		}
	}
}

// Snapshots of types that share a name but not a shape.
//
// A snapshot records its key and value types' names (reflect's String: the
// package's name and the type's, without the package path), which two
// programs' main.Item, or a type whose fields changed between two builds,
// share; and, since their shapes were recorded too, each type's structure
// (snapshot.TypeDesc). The types below are declared in block scopes, so
// that two of them can have the same name (store.Item, store.Key) and
// different shapes, as such programs' types do; an alias (saved) keeps the
// outer one in reach.

// saveTyped saves a store of kv (seed 5) to a fresh file and returns its
// path.
func saveTyped[K comparable, V any](t *testing.T, kv map[K]V) string {
	t.Helper()
	s := newTestMap[K, V](t, MapOptions{Seed: 5})
	for k, v := range kv {
		s.Set(k, v)
	}
	p := filepath.Join(t.TempDir(), "typed.snap")
	if err := s.Save(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// openTyped opens p as K → V and returns what Open gave: the error, or
// the values of keys.
func openTyped[K comparable, V any](p string, keys ...K) (string, error) {
	s, err := Open[K, V](p, nil)
	if err != nil {
		return "", err
	}
	out := fmt.Sprintf("%d entries:", s.Len())
	for _, k := range keys {
		v, ok := s.Get(k)
		out += fmt.Sprintf(" %v=%+v,%v", k, v, ok)
	}
	return out, nil
}

// crossOpen saves kv as K1 → V1 and opens the file as K2 → V2, returning
// what that gave (openTyped). It checks that the attempt left the file as
// it was and that it still opens as K1 → V1, with kv in it.
func crossOpen[K1 comparable, V1 any, K2 comparable, V2 any](t *testing.T, kv map[K1]V1, keys ...K2) (string, error) {
	t.Helper()
	p := saveTyped(t, kv)
	before, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := openTyped[K2, V2](p, keys...)
	if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
		t.Errorf("opening as %s → %s changed the file", typeName[K2](), typeName[V2]())
	}
	s, err1 := Open[K1, V1](p, nil)
	if err1 != nil {
		t.Fatalf("the file no longer opens as the types it was saved from: %v", err1)
	}
	for k, v := range kv {
		if g, ok := s.Get(k); !ok || !reflect.DeepEqual(g, v) {
			t.Errorf("saved as %s → %s and reopened: %v = %+v, %v; want %+v", typeName[K1](), typeName[V1](), k, g, ok, v)
		}
	}
	return got, err
}

// shapeCase is a snapshot saved as one type and opened as another of the
// same name and another shape.
type shapeCase struct {
	name string
	// onMain is what an Open that does not check shapes gives: the
	// entries it restores, or the start of its error (not checked; it
	// shows what the check prevents).
	onMain string
	// diff is what the error must say differs.
	diff string
	open func(t *testing.T) (string, error)
}

func shapeCases() []shapeCase {
	return []shapeCase{
		{"struct field renamed", "1 entries: a={B:},true",
			"field 1 (from 1) is A in the file, B here",
			func(t *testing.T) (string, error) {
				type Item struct{ A int }
				type saved = Item
				{
					type Item struct{ B string }
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {7}}, "a")
				}
			}},
		{"struct field int to string", "store: snapshot corrupt: a record does not decode",
			"field A: int in the file, string here",
			func(t *testing.T) (string, error) {
				type Item struct{ A int }
				type saved = Item
				{
					type Item struct{ A string }
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {7}}, "a")
				}
			}},
		{"struct field int to int8", "1 entries: a={A:7},true",
			"field A: int in the file, int8 here",
			func(t *testing.T) (string, error) {
				type Item struct{ A int }
				type saved = Item
				{
					type Item struct{ A int8 }
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {7}}, "a")
				}
			}},
		{"struct field int to int8, a value that overflows", "store: snapshot corrupt: a record does not decode",
			"field A: int in the file, int8 here",
			func(t *testing.T) (string, error) {
				type Item struct{ A int }
				type saved = Item
				{
					type Item struct{ A int8 }
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {700}}, "a")
				}
			}},
		{"struct field pointer to value", "2 entries: a={P:1},true b={P:0},true",
			"field P: *int in the file, int here",
			func(t *testing.T) (string, error) {
				type Item struct{ P *int }
				type saved = Item
				one := 1
				{
					type Item struct{ P int }
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {&one}, "b": {nil}}, "a", "b")
				}
			}},
		{"struct field added", "1 entries: a={A:7 B:0},true",
			"field B only here",
			func(t *testing.T) (string, error) {
				type Item struct{ A int }
				type saved = Item
				{
					type Item struct{ A, B int }
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {7}}, "a")
				}
			}},
		{"struct field tag", "1 entries: a={A:0},true",
			"field 1 (from 1) is A in the file, A `codec:\"x\"` here",
			func(t *testing.T) (string, error) {
				type Item struct{ A int }
				type saved = Item
				{
					type Item struct {
						A int `codec:"x"`
					}
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {7}}, "a")
				}
			}},
		{"named int to named string", "store: snapshot corrupt: a record does not decode",
			"store.Item int in the file, store.Item string here",
			func(t *testing.T) (string, error) {
				type Item int
				type saved = Item
				{
					type Item string
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": 7}, "a")
				}
			}},
		{"named int to named float32", "1 entries: a=7,true",
			"store.Item int in the file, store.Item float32 here",
			func(t *testing.T) (string, error) {
				type Item int
				type saved = Item
				{
					type Item float32
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": 7}, "a")
				}
			}},
		{"slice to shorter array", "1 entries: a=[1],true",
			"store.Item []int32 in the file, store.Item [1]int32 here",
			func(t *testing.T) (string, error) {
				type Item []int32
				type saved = Item
				{
					type Item [1]int32
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {1, 2}}, "a")
				}
			}},
		{"slice element int32 to string", "store: snapshot corrupt: a record does not decode",
			"element: int32 in the file, string here",
			func(t *testing.T) (string, error) {
				type Item []int32
				type saved = Item
				{
					type Item []string
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {1, 2}}, "a")
				}
			}},
		{"map value int to string", "store: snapshot corrupt: a record does not decode",
			"element: int in the file, string here",
			func(t *testing.T) (string, error) {
				type Item map[string]int
				type saved = Item
				{
					type Item map[string]string
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {"x": 1}}, "a")
				}
			}},
		{"map to struct", "1 entries: a={X:0},true",
			"store.Item map[string]int in the file, store.Item struct { X int } here",
			func(t *testing.T) (string, error) {
				type Item map[string]int
				type saved = Item
				{
					type Item struct{ X int }
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {"x": 1}}, "a")
				}
			}},
		{"nested struct field", "1 entries: a={In:{A:0}},true",
			"field In: field 1 (from 1) is A in the file, B here",
			func(t *testing.T) (string, error) {
				type In struct{ A int }
				type Item struct{ In In }
				type saved = Item
				kv := map[string]saved{"a": {In{7}}}
				{
					type In struct{ B int }
					type Item struct{ In In }
					return crossOpen[string, saved, string, Item](t, kv, "a")
				}
			}},
		{"key [4]byte to [8]byte", "store: snapshot corrupt: key [1 2 3 4 0 0 0 0] recorded in bucket",
			"store.Key [4]uint8 in the file, store.Key [8]uint8 here",
			func(t *testing.T) (string, error) {
				type Key [4]byte
				type saved = Key
				{
					type Key [8]byte
					return crossOpen[saved, int, Key, int](t, map[saved]int{{1, 2, 3, 4}: 1}, Key{1, 2, 3, 4})
				}
			}},
		{"key int64 to string", "store: snapshot corrupt: a record does not decode",
			"store.Key int64 in the file, store.Key string here",
			func(t *testing.T) (string, error) {
				type Key int64
				type saved = Key
				{
					type Key string
					return crossOpen[saved, int, Key, int](t, map[saved]int{1: 1}, "1")
				}
			}},
	}
}

// A snapshot opened as types of the same names and other shapes is
// ErrTypeMismatch, naming the file, the type and what differs, and the
// file is left as it was. Without the shapes, Open would restore some of
// these with zero, truncated or converted values, and call others
// corrupt (onMain).
func TestOpenShapeMismatch(t *testing.T) {
	for _, tc := range shapeCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.open(t)
			if !errors.Is(err, ErrTypeMismatch) {
				t.Fatalf("Open gave %q, %v; want ErrTypeMismatch (on main: %q)", got, err, tc.onMain)
			}
			msg := err.Error()
			if !strings.Contains(msg, ".snap: ") || !strings.Contains(msg, tc.diff) || !strings.Contains(msg, "has another shape than the file's") {
				t.Errorf("error %q; want the file named and %q", msg, tc.diff)
			}
			if !strings.Contains(msg, "store.Item") && !strings.Contains(msg, "store.Key") {
				t.Errorf("error %q does not name the type", msg)
			}
		})
	}
}

// Types of the same name and shape restore, whatever scope or package
// they come from: the package path is not recorded (like the name check,
// which compares the package's name only), so another program's main.Item
// of the same fields and types reads the file. Self-referential types,
// interfaces, functions and channels (described by name) restore too.
func TestOpenSameShape(t *testing.T) {
	t.Run("struct from another scope", func(t *testing.T) {
		type Item struct {
			A int
			B []string `codec:"b"`
			M map[string]*float64
			T time.Time
			D time.Duration
			a int //lint:ignore U1000 an unexported field, not saved
		}
		type saved = Item
		f := 1.5
		kv := map[string]saved{"x": {A: 1, B: []string{"p"}, M: map[string]*float64{"f": &f}, T: time.Unix(5, 0).UTC(), D: time.Second}}
		{
			type Item struct {
				A int
				B []string `codec:"b"`
				M map[string]*float64
				T time.Time
				D time.Duration
				b string //lint:ignore U1000 unexported fields are not compared
			}
			got, err := crossOpen[string, saved, string, Item](t, kv, "x")
			if err != nil || !strings.Contains(got, "x={A:1 B:[p]") {
				t.Fatalf("same shape from another scope: %q, %v", got, err)
			}
		}
	})
	t.Run("recursive type", func(t *testing.T) {
		type Node struct {
			V    int
			Next *Node
		}
		kv := map[string]Node{"a": {V: 1, Next: &Node{V: 2}}}
		p := saveTyped(t, kv)
		got, err := openTyped[string, Node](p, "a")
		if err != nil || !strings.Contains(got, "a={V:1 Next:") {
			t.Fatalf("recursive type: %q, %v", got, err)
		}
	})
	t.Run("interface and func fields", func(t *testing.T) {
		type Item struct {
			X any
			F func() `codec:"-"`
		}
		p := saveTyped(t, map[string]Item{"a": {X: "s"}})
		got, err := openTyped[string, Item](p, "a")
		if err != nil || !strings.Contains(got, "a={X:s") {
			t.Fatalf("interface field: %q, %v", got, err)
		}
	})
}

// asV1 rewrites the metadata of the snapshot at p as builds before the
// shapes wrote it: without them (the shapes' keys are left out of the
// msgpack map when nil, and internal/snapshot's TestMetaShapesAreOptional
// checks that the bytes are then those of the earlier Meta).
func asV1(t *testing.T, p string) {
	t.Helper()
	rewriteMeta(t, p, func(m *snapshot.Meta) { m.KeyDesc, m.ValueDesc = nil, nil }, 0)
}

// A snapshot written before shapes were recorded still opens, checked by
// name alone: as its own types, and (as before) as another shape of the
// same name, which the records decide.
func TestOpenWithoutShapes(t *testing.T) {
	type Item struct{ A int }
	type saved = Item
	p := saveTyped(t, map[string]saved{"a": {7}, "b": {8}})
	asV1(t, p)
	r, err := snapshot.Open(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if m := r.Meta(); m.KeyDesc != nil || m.ValueDesc != nil {
		t.Fatalf("the rewritten file still has shapes: %v, %v", m.KeyDesc, m.ValueDesc)
	}
	r.Close()
	got, err := openTyped[string, saved](p, "a", "b")
	if err != nil || got != "2 entries: a={A:7},true b={A:8},true" {
		t.Fatalf("a file without shapes, as its types: %q, %v", got, err)
	}
	{
		type Item struct{ B int }
		got, err := openTyped[string, Item](p, "a")
		if err != nil || got != "2 entries: a={B:0},true" {
			t.Fatalf("a file without shapes, as another shape of the same name: %q, %v (want it restored, by name, as before)", got, err)
		}
	}
	if _, err := openTyped[string, int](p); !errors.Is(err, ErrTypeMismatch) {
		t.Fatalf("a file without shapes, as another name: %v", err)
	}
}

// A doctored shape (deeply nested, huge, or missing parts) is a type
// mismatch with a message of bounded length, never a panic.
func TestOpenDoctoredShape(t *testing.T) {
	p := saveTyped(t, map[string]int{"a": 1})
	deep := &snapshot.TypeDesc{Kind: "int"}
	for range 400 {
		deep = &snapshot.TypeDesc{Kind: "slice", Elem: deep}
	}
	wide := &snapshot.TypeDesc{Kind: "struct"}
	for i := range 20_000 {
		wide.Fields = append(wide.Fields, snapshot.FieldDesc{Name: fmt.Sprint("F", i), Type: snapshot.TypeDesc{Kind: "string"}})
	}
	for name, d := range map[string]*snapshot.TypeDesc{
		"deep":           deep,
		"wide":           wide,
		"slice, no elem": {Kind: "slice"},
		"map, no key":    {Kind: "map", Elem: &snapshot.TypeDesc{Kind: "int"}},
		"empty":          {},
	} {
		bad := editedCopy(t, p, func(m *snapshot.Meta) { m.ValueDesc = d })
		_, err := Open[string, int](bad, nil)
		if !errors.Is(err, ErrTypeMismatch) || len(err.Error()) > 4500 {
			t.Errorf("%s: %.300v (%d bytes); want ErrTypeMismatch, briefly", name, err, len(fmt.Sprint(err)))
		}
	}
}

// A cache that cacheSize gives fewer, larger buckets than BucketSize (one
// or two slots a bucket, and a rule that rounds the table up) saves a
// snapshot that opens with its entries. Save cut the histogram's rows to
// BucketSize+1 loads, dropping the buckets that held more, and Open then
// refused its own file as corrupt.
func TestSaveOpenCacheWithLargerBuckets(t *testing.T) {
	for _, o := range []Options{
		{MaxEntries: 10, BucketSize: 1, Placement: bucket.DoubleHash},
		{MaxEntries: 5, BucketSize: 1, Placement: bucket.GoLeft, Choices: 4},
		{MaxEntries: 10, BucketSize: 2, Placement: bucket.DoubleHash},
		{MaxEntries: 10, BucketSize: 1},
		{MaxEntries: 1000, BucketSize: 8, Placement: bucket.DoubleHash},
	} {
		t.Run(fmt.Sprintf("%v/d=%d/C=%d/max=%d", o.Placement, o.Choices, o.BucketSize, o.MaxEntries), func(t *testing.T) {
			o.Seed = 3
			s := newTestStore[int, int](t, o)
			for i := range 10 * o.MaxEntries {
				s.Set(i, i)
			}
			path := filepath.Join(t.TempDir(), "s.snap")
			if err := s.Save(path); err != nil {
				t.Fatal(err)
			}
			r, err := Open[int, int](path, &o)
			if err != nil {
				t.Fatalf("reopening its own snapshot: %v", err)
			}
			if r.Len() != s.Len() {
				t.Fatalf("reopened with %d entries, saved %d", r.Len(), s.Len())
			}
			for k, v := range s.All() {
				if w, ok := r.Get(k); !ok || w != v {
					t.Fatalf("key %d: reopened %d, %v; saved %d", k, w, ok, v)
				}
			}
		})
	}
}

// Options given to Open must agree with the file; zero fields take its.
func TestOpenOptions(t *testing.T) {
	s := newTestMap[string, int](t, MapOptions{Placement: bucket.Halves, Choices: 3, BucketSize: 4, Hash: 1, Seed: 42})
	for i := range 1000 {
		s.Set(fmt.Sprint(i), i)
	}
	_, path := saveOpen(t, s, &Options{Seed: 42, Choices: 3})
	for _, o := range []Options{
		{Seed: 43}, {Choices: 2}, {BucketSize: 8}, {Placement: bucket.GoLeft}, {Choices: 1}, {MaxEntries: 10},
	} {
		_, err := Open[string, int](path, &o)
		if !errors.Is(err, ErrOptionsMismatch) || !strings.Contains(err.Error(), path) {
			t.Errorf("Open with %+v: %v, want ErrOptionsMismatch naming the file", o, err)
		}
	}
}

// rewriteMeta changes a snapshot's metadata record in place, as a damaged
// or doctored file would have it.
func rewriteMeta(t *testing.T, path string, change func(m *snapshot.Meta), version uint32) {
	t.Helper()
	testutil.RewriteMeta(t, path, change, version)
}

// Each kind of bad input gets its sentinel error and a message naming the
// file, and never a store.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	s := newTestMap[string, int](t, MapOptions{Seed: 9})
	for i := range 3000 {
		s.Set(fmt.Sprint("k", i), i)
	}
	good := filepath.Join(dir, "good.snap")
	if err := s.Save(good); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	file := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	doctored := func(name string, change func(m *snapshot.Meta), version uint32) string {
		p := file(name, raw)
		rewriteMeta(t, p, change, version)
		return p
	}
	cases := []struct {
		name string
		path string
		want error
	}{
		{"missing", filepath.Join(dir, "nope.snap"), ErrNotFound},
		{"not bbolt", file("text.snap", []byte(strings.Repeat("not a database\n", 500))), ErrNotSnapshot},
		{"empty", file("empty.snap", nil), ErrNotSnapshot},
		{"directory", dir, ErrNotSnapshot},
		{"unreadable (a file in the path)", filepath.Join(good, "x.snap"), ErrRead},
		{"truncated", file("trunc.snap", raw[:len(raw)/2]), ErrCorrupt},
		{"newer version", doctored("newer.snap", func(*snapshot.Meta) {}, snapshot.Version+1), ErrNewerVersion},
		{"other seed", doctored("seed.snap", func(m *snapshot.Meta) { m.Seed++ }, 0), ErrCorrupt},
		{"other table size", doctored("size.snap", func(m *snapshot.Meta) { m.Buckets *= 1000 }, 0), ErrCorrupt},
		{"wrong histogram", doctored("hist.snap", func(m *snapshot.Meta) { m.Histogram[0][1]--; m.Histogram[0][2]++ }, 0), ErrCorrupt},
		{"bad placement", doctored("rule.snap", func(m *snapshot.Meta) { m.Placement = "best" }, 0), ErrCorrupt},
	}
	for _, tc := range cases {
		r, err := Open[string, int](tc.path, nil)
		if r != nil || !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: Open = %v, %v; want %v naming %s", tc.name, r != nil, err, tc.want, tc.path)
		}
	}
	if _, err := Open[string, int](filepath.Join(dir, "nope"), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file does not match fs.ErrNotExist: %v", err)
	}
	if _, err := Open[int, int](good, nil); !errors.Is(err, ErrTypeMismatch) {
		t.Errorf("wrong key type: %v", err)
	}
	if _, err := Open[string, string](good, nil); !errors.Is(err, ErrTypeMismatch) {
		t.Errorf("wrong value type: %v", err)
	}

	// A file another process holds for writing.
	db, err := bolt.Open(good, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open[string, int](good, nil); !errors.Is(err, ErrLocked) {
		t.Errorf("locked file: %v", err)
	}
	db.Close()

	// Keys hashed through maphash cannot be saved.
	type point struct{ X, Y int }
	sp := newTestMap[point, int](t, MapOptions{Seed: 1})
	sp.Set(point{1, 2}, 3)
	if err := sp.Save(filepath.Join(dir, "p.snap")); !errors.Is(err, ErrKeyType) {
		t.Errorf("struct keys: %v", err)
	}
	// A failed save leaves nothing behind, and the good file still opens.
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if _, err := Open[string, int](good, nil); err != nil {
		t.Errorf("the good file: %v", err)
	}
}

// Every bit flip and truncation of a small snapshot fails with a sentinel
// error or opens into a store that passes the invariant checks and holds
// exactly the saved entries (a flip in bbolt's free space changes
// nothing).
func TestOpenDamaged(t *testing.T) {
	if testutil.Race {
		// The race detector's build checks every unsafe.Slice (checkptr),
		// and a damaged page's element count makes bbolt's slice of it a
		// fatal error there, which no recover catches (about 1 run in 350
		// of random damage). Builds without it panic, and Open's guard
		// (internal/snapshot) turns the panic into ErrCorrupt: this test
		// checks that in the suite without -race.
		t.Skip("random damage to bbolt pages is checked without the race detector: its checkptr makes bbolt's reads of them fatal")
	}
	dir := t.TempDir()
	s := newTestMap[string, int](t, MapOptions{Seed: 12})
	for i := range 200 {
		s.Set(fmt.Sprint(i), i)
	}
	path := filepath.Join(dir, "s.snap")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	want := maps.Collect(s.All())
	rng := rand.New(rand.NewPCG(seedFor(t), 1))
	tries := 300
	if testing.Short() {
		tries = 60
	}
	for x := range tries {
		b := bytes.Clone(raw)
		if x%5 == 0 {
			b = b[:rng.IntN(len(b))]
		} else {
			b[rng.IntN(len(b))] ^= 1 << rng.IntN(8)
		}
		checkDamaged(t, filepath.Join(dir, "d.snap"), b, want)
	}
	// A snapshot whose first page was overwritten is damaged, not foreign:
	// bbolt falls back to the second meta page's older state, which holds
	// no snapshot metadata yet.
	b := bytes.Clone(raw)
	clear(b[:4096])
	p := filepath.Join(dir, "zeroed.snap")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open[string, int](p, nil); !errors.Is(err, ErrCorrupt) {
		t.Errorf("first page zeroed: %v, want ErrCorrupt", err)
	}
}

// A flipped bit in either of bbolt's meta pages (its page id, magic
// number, version, page size, root, free list, high-water mark,
// transaction id or checksum) makes a damaged snapshot: Open fails with
// ErrCorrupt, or restores exactly the saved entries when the page left
// holds the whole snapshot. It is never ErrNotSnapshot, which is for
// files that are not snapshots at all, even though bbolt, rejecting a
// page whose checksum fails, falls back to the other one's older state,
// which holds no snapshot, as a foreign bbolt file holds none.
func TestOpenDamagedMetaPage(t *testing.T) {
	dir := t.TempDir()
	s := newTestMap[string, int](t, MapOptions{Seed: 12})
	for i := range 200 {
		s.Set(fmt.Sprint(i), i)
	}
	path := filepath.Join(dir, "s.snap")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	want := maps.Collect(s.All())
	p := filepath.Join(dir, "d.snap")
	corrupt, flips := 0, 0
	// The second page is one page in, as the first page says.
	ps := int(binary.LittleEndian.Uint32(raw[16+8:]))
	for _, page := range []int{0, ps} {
		// A meta page: a 16-byte page header, then 64 bytes of meta.
		for off := page; off < page+16+64; off++ {
			for bit := range 8 {
				if testing.Short() && bit != off%8 {
					continue // one bit a byte, each bit in turn
				}
				flips++
				b := bytes.Clone(raw)
				b[off] ^= 1 << bit
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
				r, err := Open[string, int](p, nil)
				switch {
				case errors.Is(err, ErrCorrupt):
					corrupt++
				case err != nil:
					t.Fatalf("bit %d of byte %d flipped: %v, want ErrCorrupt", bit, off, err)
				case !maps.Equal(maps.Collect(r.All()), want):
					t.Fatalf("bit %d of byte %d flipped: opened into %d entries, want the %d saved", bit, off, r.Len(), len(want))
				}
			}
		}
	}
	// Three fields a flipped bit must not slip past: the root's sequence,
	// the high-water mark and the checksum of the first page, which holds
	// the snapshot's only complete state.
	for _, off := range []int{40, 60, 72} {
		b := bytes.Clone(raw)
		b[off] ^= 1
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Open[string, int](p, nil); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), p) {
			t.Errorf("byte %d flipped: %v, want ErrCorrupt naming the file", off, err)
		}
	}
	t.Logf("%d of %d flips are ErrCorrupt, the others restore the snapshot", corrupt, flips)
}

// checkDamaged writes b, a damaged snapshot, to p and opens it: it must
// fail with one of Open's sentinel errors, or open into a store that
// passes the invariant checks and, if want is not nil (b is a damaged
// copy of a snapshot of want), holds exactly want's entries: a damage
// that Open does not notice must not change what it restores.
func checkDamaged(t *testing.T, p string, b []byte, want map[string]int) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open[string, int](p, nil)
	if err != nil {
		for _, want := range []error{ErrCorrupt, ErrNotSnapshot, ErrNewerVersion, ErrTypeMismatch} {
			if errors.Is(err, want) {
				return
			}
		}
		t.Fatalf("unexpected error: %v", err)
	}
	if err := r.checkInvariants(); err != nil {
		t.Fatalf("opened a damaged file into a broken store: %v", err)
	}
	if want == nil {
		return
	}
	if got := maps.Collect(r.All()); !maps.Equal(got, want) || r.Len() != len(want) {
		t.Fatalf("opened a damaged file into %d entries (Len %d), want the %d saved", len(got), r.Len(), len(want))
	}
}

// FuzzOpen opens damaged snapshots: any bytes, one of them flipped by xor
// at pos. Open must fail with a sentinel error or give a sound store; and
// a damaged copy of one of the seed snapshots (a prefix of it, one byte
// flipped) that opens must hold exactly the entries saved.
//
//	go test -run '^$' -fuzz '^FuzzOpen$' -fuzzminimizetime 200x ./store
func FuzzOpen(f *testing.F) {
	type seed struct {
		raw  []byte
		want map[string]int
	}
	var seeds []seed
	// A store, and a cache where half the entries have expiries (an hour
	// away: none expires while the fuzzer runs) and some are evicted.
	for x, o := range []Options{{Seed: 13, BucketSize: 2}, {Seed: 14, MaxEntries: 64, Placement: bucket.DChoice, Choices: 3}} {
		s, _ := New[string, int](o)
		for i := range 100 {
			if o.MaxEntries > 0 && i%2 == 0 {
				setWithTTL(s, fmt.Sprint(i), i, time.Hour)
			} else {
				s.Set(fmt.Sprint(i), i)
			}
		}
		path := filepath.Join(f.TempDir(), fmt.Sprint(x, ".snap"))
		if err := s.Save(path); err != nil {
			f.Fatal(err)
		}
		raw, _ := os.ReadFile(path)
		seeds = append(seeds, seed{raw, maps.Collect(s.All())})
		f.Add(raw, uint32(0), uint8(0))
		f.Add(raw, uint32(len(raw)/2), uint8(1))
		f.Add(raw, uint32(len(raw)-4096+20), uint8(0x40))
		f.Add(raw[:len(raw)-100], uint32(0), uint8(0))
	}
	f.Fuzz(func(t *testing.T, b []byte, pos uint32, xor uint8) {
		// Other inputs hold who knows what, and need only fail cleanly.
		var want map[string]int
		for _, s := range seeds {
			if len(b) > 0 && bytes.HasPrefix(s.raw, b) {
				want = s.want
			}
		}
		if len(b) > 0 {
			b = bytes.Clone(b)
			b[int(pos)%len(b)] ^= xor
		}
		checkDamaged(t, filepath.Join(t.TempDir(), "f.snap"), b, want)
	})
}

// Open leaves out entries whose expiry has passed and keeps the others.
// The store has no expiry of its own yet (Save records 0), so the file is
// rewritten with expiries, as a store with TTLs would write it.
func TestOpenSkipsExpired(t *testing.T) {
	s := newTestMap[string, int](t, MapOptions{Seed: 51})
	for i := range 1000 {
		s.Set(fmt.Sprint(i), i)
	}
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.snap"), filepath.Join(dir, "dst.snap")
	if err := s.Save(src); err != nil {
		t.Fatal(err)
	}
	r, err := snapshot.Open(src, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := snapshot.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	dec, enc := snapshot.NewDecoder[string, int](), snapshot.NewEncoder[string, int]()
	now := time.Now().UnixNano()
	err = r.ForEach(func(rec []byte) error {
		k, v, _, b, err := dec.DecodeRecord(rec)
		if err != nil {
			return err
		}
		exp := now + int64(time.Hour) // odd values: an hour to live
		if v%2 == 0 {
			exp = now - 1 // even: expired
		}
		out, err := enc.EncodeRecord(k, v, exp, b)
		if err != nil {
			return err
		}
		return w.Append(out)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(r.Meta()); err != nil {
		t.Fatal(err)
	}
	got, err := Open[string, int](dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := got.checkInvariants(); err != nil {
		t.Fatal(err)
	}
	if got.Len() != 500 {
		t.Fatalf("%d entries restored, want the 500 unexpired", got.Len())
	}
	for i := range 1000 {
		if v, ok := got.Get(fmt.Sprint(i)); ok != (i%2 == 1) || ok && v != i {
			t.Fatalf("key %d: %d, %v", i, v, ok)
		}
	}
}

// Open honours SizeHint as New does: a snapshot whose table is smaller
// than the hint's is restored into the hint's table, every key with its
// value, and the store then takes the hinted keys without growing; a hint
// the snapshot's table meets restores the saved buckets as they were.
func TestOpenSizeHint(t *testing.T) {
	o := Options{Placement: bucket.GoLeft, Choices: 2, Seed: 11}
	s := newTestMapOf[uint64, int](t, o)
	ref := make(map[uint64]int)
	key := func(i int) uint64 { return uint64(i)*0x9e3779b97f4a7c15 + 1 }
	for i := range 3000 {
		s.Set(key(i), i)
		ref[key(i)] = i
	}
	saved := s.Report()
	const hint = 40_000
	r, path := saveOpen(t, s, &Options{SizeHint: hint})
	if got, want := r.Report().Buckets, int(tableFor(cfgOf(r), hint)); got != want || got <= saved.Buckets {
		t.Fatalf("restored with hint %d: %d buckets, want %d (saved: %d)", hint, got, want, saved.Buckets)
	}
	if r.Len() != len(ref) {
		t.Fatalf("restored Len %d, want %d", r.Len(), len(ref))
	}
	for k, v := range ref {
		if got, ok := r.Get(k); !ok || got != v {
			t.Fatalf("restored Get(%#x) = %d, %v; want %d", k, got, ok, v)
		}
	}
	for i := len(ref); i < hint; i++ {
		r.Set(key(i), i)
	}
	if g := r.Stats().Grows; g != 0 {
		t.Errorf("%d keys into a store restored with hint %d: %d growths, want 0", hint, hint, g)
	}
	r.Clear()
	if got, want := r.Report().Buckets, int(tableFor(cfgOf(r), hint)); got != want {
		t.Errorf("after Clear: %d buckets, want the hint's %d", got, want)
	}

	// A hint the saved table already meets: the saved buckets.
	for _, small := range []int{0, 1, 3000} {
		got, err := Open[uint64, int](path, &Options{SizeHint: small})
		if err != nil {
			t.Fatalf("Open with hint %d: %v", small, err)
		}
		sameReport(t, saved, got.Report())
		if err := got.checkInvariants(); err != nil {
			t.Errorf("restored with hint %d: %v", small, err)
		}
	}

	// Hints New refuses, and a hint for a cache.
	for _, c := range []struct {
		hint int
		want error
	}{{-1, ErrOptions}, {MaxSizeHint + 1, ErrOptions}} {
		if got, err := Open[uint64, int](path, &Options{SizeHint: c.hint}); !errors.Is(err, c.want) || got != nil {
			t.Errorf("Open with hint %d: %v, %v; want %v", c.hint, got, err, c.want)
		}
	}
	c := newTestCache(t, CacheOptions[uint64, int]{MaxEntries: 100, Seed: 3})
	c.Set(1, 1)
	_, cpath := saveOpen(t, c, nil)
	if got, err := OpenMap[uint64, int](cpath, &MapOptions{SizeHint: 10}); !errors.Is(err, ErrOptionsMismatch) || got != nil {
		t.Errorf("OpenMap of a cache with a hint: %v, %v; want ErrOptionsMismatch", got, err)
	}
}

// Open takes Growth from its options, as it does SizeHint: the restored
// table grows by it. A Growth for a cache's snapshot is
// ErrOptionsMismatch, and one New would refuse is ErrOptions, not a
// corrupt file.
func TestOpenGrowth(t *testing.T) {
	s := newTestMap[uint64, int](t, MapOptions{Placement: bucket.GoLeft, Choices: 2, Seed: 3})
	key := func(i int) uint64 { return uint64(i)*0x9e3779b97f4a7c15 + 1 }
	for i := range 5000 {
		s.Set(key(i), i)
	}
	r, path := saveOpen(t, s, &Options{Growth: 3})
	if got := r.options().Growth; got != 3 {
		t.Fatalf("restored with Growth 3: Options().Growth = %v", got)
	}
	rm := r.(*Map[uint64, int])
	before := rm.tabs.Load().cur.n
	for i := 5000; r.Stats().Grows == 0; i++ {
		r.Set(key(i), i)
	}
	if after := rm.tabs.Load().cur.n; after < 3*before || after > 3*before+2 {
		t.Errorf("restored with Growth 3: grew from %d to %d buckets, want 3 times", before, after)
	}
	if r2, err := Open[uint64, int](path, nil); err != nil || r2.options().Growth != DefaultGrowth {
		t.Errorf("Open with nil options: %v, Growth %v; want the default %v", err, r2.options().Growth, DefaultGrowth)
	}
	for _, g := range []float64{1.1, math.NaN()} {
		if _, err := Open[uint64, int](path, &Options{Growth: g}); !errors.Is(err, ErrOptions) || errors.Is(err, ErrCorrupt) {
			t.Errorf("Open with Growth %v: error %v, want ErrOptions and not ErrCorrupt", g, err)
		}
	}
	c := newTestCache(t, CacheOptions[uint64, int]{MaxEntries: 500, Seed: 3})
	for i := range 600 {
		c.Set(key(i), i)
	}
	cpath := filepath.Join(t.TempDir(), "c.snap")
	if err := c.Save(cpath); err != nil {
		t.Fatalf("Save: %v", err)
	}
	if _, err := OpenMap[uint64, int](cpath, &MapOptions{Growth: 2}); !errors.Is(err, ErrOptionsMismatch) {
		t.Errorf("OpenMap of a cache's snapshot: error %v, want ErrOptionsMismatch", err)
	}
}
