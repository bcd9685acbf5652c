package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/snapshot"
)

// craftSnapshot writes a snapshot of keys (key i with value i) that
// describes a table of n buckets under the options of s: each key in its
// first candidate with room there, as Save would write a store that grew
// to n buckets and then lost all but these keys. It needs no table of n
// buckets, so n can be 2^32.
func craftSnapshot(t *testing.T, path string, s *Store[string, int], keys []string, n uint64) {
	t.Helper()
	o := s.opts
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
		gen.Fill(s.hash(k), c[:])
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
	for _, o := range []Options{{Seed: 5}, {Placement: 1, Choices: 3, Seed: 6}, {Placement: 4, Choices: 2, BucketSize: 4, Hash: 1, Seed: 7}} {
		t.Run(name(o), func(t *testing.T) {
			s := newTestStore[string, int](t, o)
			keys := make([]string, 300)
			for i := range keys {
				keys[i] = fmt.Sprint("key-", i)
				s.Set(keys[i], i)
			}
			// Double hashing takes a prime or a power of two.
			n := uint64(hashfn.MaxBuckets)
			if s.opts.Placement.Scheme() == hashfn.Parts {
				n -= n % uint64(s.opts.Choices)
			}
			crafted := filepath.Join(dir, name(o)+"-crafted.snap")
			craftSnapshot(t, crafted, s, keys, n)
			var r *Store[string, int]
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
			if got, want := uint64(r.Load().Buckets), tableFor(&r.opts, uint64(len(keys))); got != want {
				t.Errorf("restored into %d buckets, want %d", got, want)
			}

			// The same file, doctored: the records were placed for a
			// table of about 2^32 buckets, the metadata says half as many
			// (a size the rule accepts, the histogram made to agree).
			doctored := filepath.Join(dir, name(o)+"-doctored.snap")
			craftSnapshot(t, doctored, s, keys, n)
			half := n / 2
			if s.opts.Placement.Scheme() == hashfn.Parts {
				half -= half % uint64(s.opts.Choices)
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
	sameReport(t, s.Load(), r.Load()) // in place: a few MiB
	defer func(f uint64) { sparseFloor = f }(sparseFloor)
	sparseFloor = 1 << 10
	r, _ = saveOpen(t, s, nil)
	sameContents(t, s, r)
	if got, want := uint64(r.Load().Buckets), tableFor(&r.opts, uint64(s.Len())); got != want || got >= uint64(s.Load().Buckets)/sparseFactor {
		t.Errorf("restored into %d buckets, want %d (the saved table had %d)", got, want, s.Load().Buckets)
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
	var s *Store[uint64, uint64]
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
func grownAndEmptied(t *testing.T, seed uint64, n, every int) *Store[string, int] {
	t.Helper()
	s := newTestStore[string, int](t, Options{Seed: seed})
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
