package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/snapshot"
)

// claimedRecord is a record of a snapshot rewritten by rewriteRecords:
// written in bucket b, and counted in the histogram in bucket claim, so
// that a test can make the records disagree with a metadata that is
// consistent in itself.
type claimedRecord struct {
	k        string
	v        int
	exp      int64
	b, claim int64
}

// rewriteRecords copies the snapshot at src with its records as edit
// makes them, and a histogram of the buckets they claim (the stash count
// is kept), and returns the copy's path. s is the store saved there.
// edit gets the records as saved, each claiming the bucket it is in, the
// generator of the file's table and the most records its histogram counts
// in a bucket.
func rewriteRecords(t *testing.T, s kv[string, int], src string, edit func(recs []claimedRecord, gen *hashfn.Generator, slots int) []claimedRecord) string {
	t.Helper()
	r, err := snapshot.Open(src, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m := r.Meta()
	var recs []claimedRecord
	dec := snapshot.NewDecoder[string, int]()
	err = r.ForEach(func(rec []byte) error {
		k, v, exp, b, err := dec.DecodeRecord(rec)
		recs = append(recs, claimedRecord{k, v, exp, b, b})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	gen, err := s.options().Placement.Generator(m.Buckets, m.Choices)
	if err != nil {
		t.Fatal(err)
	}
	slots := len(m.Histogram[0]) - 1
	recs = edit(recs, &gen, slots)

	dst := filepath.Join(t.TempDir(), "records.snap")
	w, err := snapshot.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	enc := snapshot.NewEncoder[string, int]()
	loads := make(map[uint64]uint8)
	for _, c := range recs {
		rec, err := enc.EncodeRecord(c.k, c.v, c.exp, c.b)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Append(rec); err != nil {
			t.Fatal(err)
		}
		if c.claim != snapshot.StashBucket {
			loads[uint64(c.claim)]++
		}
	}
	m.Histogram = snapshot.SparseHistogram(&gen, len(m.Histogram), slots, loads)
	if err := w.Commit(m); err != nil {
		t.Fatal(err)
	}
	return dst
}

// emptyBuckets returns the first n buckets that no record claims.
func emptyBuckets(recs []claimedRecord, n int) []int64 {
	var out []int64
	for b := int64(0); len(out) < n; b++ {
		if !slices.ContainsFunc(recs, func(c claimedRecord) bool { return c.claim == b }) {
			out = append(out, b)
		}
	}
	return out
}

// TestOpenChecksRecords: a snapshot whose metadata is consistent but
// whose records do not stand where the file's table lets them (in a
// bucket that is not one of their key's candidates, more records in a
// bucket than it holds, a key twice, a cache's record in a stash) is
// corrupt, and the error names the file and the record, whichever way
// Open restores it: in place, or into a smaller table when the saved one
// is sparse (sparseFloor lowered here).
func TestOpenChecksRecords(t *testing.T) {
	m := grownAndEmptied(t, 12, 20_000, 50)
	c := newTestCache(t, CacheOptions[string, int]{MaxEntries: 1 << 14, Seed: 13})
	for i := range 1 << 14 {
		c.Set(fmt.Sprint("key-", i), i)
	}
	for i := range 1 << 14 {
		if i%64 != 0 {
			c.Delete(fmt.Sprint("key-", i))
		}
	}
	type edit struct {
		name, want string
		edit       func(s kv[string, int], recs []claimedRecord, gen *hashfn.Generator, slots int) []claimedRecord
	}
	edits := []edit{
		{"a bucket not among the candidates", "not one of its candidates", func(s kv[string, int], recs []claimedRecord, gen *hashfn.Generator, slots int) []claimedRecord {
			var cs [hashfn.MaxChoices]uint64
			gen.Fill(s.hashOf(recs[0].k), cs[:])
			for _, b := range emptyBuckets(recs, s.options().Choices+1) {
				if !slices.Contains(cs[:s.options().Choices], uint64(b)) {
					recs[0].b = b // still claiming its own bucket
					return recs
				}
			}
			panic("unreachable: d+1 buckets hold one that is not among d candidates")
		}},
		{"a bucket fuller than it holds", "holds more than", func(s kv[string, int], recs []claimedRecord, gen *hashfn.Generator, slots int) []claimedRecord {
			// Keys of the store's hash that share a candidate x, one
			// more than the histogram's largest load, all in x; each
			// claims a bucket of its own.
			var x uint64
			var keys []string
			for i := 0; len(keys) <= slots; i++ {
				k := fmt.Sprint("extra-", i)
				var cs [hashfn.MaxChoices]uint64
				gen.Fill(s.hashOf(k), cs[:])
				if len(keys) == 0 {
					x = cs[0]
				}
				if slices.Contains(cs[:s.options().Choices], x) && !slices.ContainsFunc(recs, func(c claimedRecord) bool { return c.k == k }) {
					keys = append(keys, k)
				}
			}
			for i, b := range emptyBuckets(recs, len(keys)) {
				recs = append(recs, claimedRecord{k: keys[i], v: i, b: int64(x), claim: b})
			}
			return recs
		}},
		{"a key twice", "twice", func(s kv[string, int], recs []claimedRecord, _ *hashfn.Generator, _ int) []claimedRecord {
			again := recs[0]
			again.claim = emptyBuckets(recs, 1)[0]
			return append(recs, again)
		}},
	}
	cacheEdits := append(edits, edit{"a cache's record in the stash", "stash of a cache", func(_ kv[string, int], recs []claimedRecord, _ *hashfn.Generator, _ int) []claimedRecord {
		recs[0].b = snapshot.StashBucket // its bucket still claimed: no stash in the metadata
		return recs
	}})
	for _, tc := range []struct {
		name  string
		s     kv[string, int]
		edits []edit
	}{{"map", m, edits}, {"cache", c, cacheEdits}} {
		_, src := saveOpen(t, tc.s, nil)
		for _, sparse := range []bool{false, true} {
			for _, e := range tc.edits {
				t.Run(fmt.Sprintf("%s/sparse=%v/%s", tc.name, sparse, e.name), func(t *testing.T) {
					if sparse {
						defer func(f uint64) { sparseFloor = f }(sparseFloor)
						sparseFloor = 1 << 10
					}
					bad := rewriteRecords(t, tc.s, src, func(recs []claimedRecord, gen *hashfn.Generator, slots int) []claimedRecord {
						return e.edit(tc.s, recs, gen, slots)
					})
					r, err := Open[string, int](bad, nil)
					if r != nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), bad) ||
						!strings.Contains(err.Error(), "record ") || !strings.Contains(err.Error(), e.want) {
						t.Fatalf("Open: %v, %v; want ErrCorrupt naming the file and the record, saying %q", r != nil, err, e.want)
					}
				})
			}
		}
	}
}
