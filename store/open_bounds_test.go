package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/snapshot"
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
// into a store holding those keys in a table sized for them. Open used to
// allocate the whole table first.
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

// A cache's table is allocated once by Open, as by New: Open used to
// allocate it twice.
func TestOpenCacheAllocatesOnce(t *testing.T) {
	o := Options{MaxEntries: 1 << 18, Seed: 9}
	var s kv[uint64, uint64]
	fresh := allocatedBy(func() { s, _ = New[uint64, uint64](o) })
	for i := range uint64(1000) {
		s.Set(i, i)
	}
	path := filepath.Join(t.TempDir(), "c.snap")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	var err error
	if a := allocatedBy(func() { _, err = Open[uint64, uint64](path, nil) }); a > fresh*3/2 {
		t.Errorf("Open allocated %d MiB, New %d MiB", a>>20, fresh>>20)
	}
	if err != nil {
		t.Fatal(err)
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
// with little memory, whatever they claim. A cache's table is allocated
// whole from its bound: 736 MiB for 2^24 string → int entries, 11.5 GiB
// for 2^28, more than many machines have (the process dies of it).
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
		want error // nil: opens, empty
	}{
		{"a cache of 2^24", cache("2^24.snap", Options{MaxEntries: 1 << 24, Seed: 3}), ErrOptions},
		{"a cache of 2^28", big, ErrOptions},
		{"a cache of 2^28 in buckets of one slot", cache("2^28-1.snap", Options{MaxEntries: MaxCacheEntries, Placement: bucket.DoubleHash, Choices: 3, BucketSize: 1, Seed: 4}), ErrOptions},
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
		case tc.want == nil && (err != nil || r.Len() != 0):
			t.Errorf("%s: Open = %v; want an empty store", tc.name, err)
		case tc.want != nil && (r != nil || !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.path)):
			t.Errorf("%s: Open = %v, %v; want %v naming the file", tc.name, r != nil, err, tc.want)
		case tc.want == ErrOptions && !strings.Contains(err.Error(), "Options{MaxEntries: "):
			t.Errorf("%s: %v does not say which option restores the file", tc.name, err)
		}
	}
}

// A cache saved nearly empty, whose table is over sparseFloor (lowered
// here), is restored when the options name its bound, and refused with
// ErrOptions (not ErrCorrupt: the file is sound) saying so when they do
// not; saved a quarter full, it needs no option.
func TestOpenNearlyEmptyCache(t *testing.T) {
	defer func(f uint64) { sparseFloor = f }(sparseFloor)
	sparseFloor = 1 << 10
	const bound = 4096
	s := newTestCache[string, int](t, CacheOptions{MaxEntries: bound, Seed: 11})
	for i := range 100 {
		s.Set(fmt.Sprint("key-", i), i)
	}
	path := filepath.Join(t.TempDir(), "c.snap")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	r, err := Open[string, int](path, nil)
	if r != nil || !errors.Is(err, ErrOptions) || errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) ||
		!strings.Contains(err.Error(), fmt.Sprintf("Options{MaxEntries: %d}", bound)) {
		t.Fatalf("a nearly empty cache without its bound: %v; want ErrOptions naming the file and the option", err)
	}
	r, _ = saveOpen(t, s, &Options{MaxEntries: bound})
	sameContents(t, s, r)

	for i := 100; s.Len() < bound/sparseFactor; i++ {
		s.Set(fmt.Sprint("key-", i), i)
	}
	r, _ = saveOpen(t, s, nil)
	sameContents(t, s, r)
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
