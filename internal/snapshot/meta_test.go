package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"
	bolt "go.etcd.io/bbolt"

	"github.com/twochoice/twochoice/hashfn"
)

// rewriteMeta changes the metadata record of the snapshot at path in
// place, as a damaged or doctored file would have it.
func rewriteMeta(t *testing.T, path string, change func(m *Meta)) {
	t.Helper()
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMeta)
		var m Meta
		if err := codec.NewDecoderBytes(b.Get(keyMeta), handle).Decode(&m); err != nil {
			return err
		}
		change(&m)
		var enc []byte
		if err := codec.NewEncoderBytes(&enc, handle).Encode(&m); err != nil {
			return err
		}
		return b.Put(keyMeta, enc)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Open refuses metadata whose claims disagree with each other, with the
// format's limits or with the size of the file, before any reader sizes
// anything by them: ErrCorrupt, naming the file and the claim.
func TestMetaClaims(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	write(t, good, sampleEntries(100, 13))
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	const huge = hashfn.MaxBuckets
	cases := []struct {
		name, want string
		change     func(m *Meta)
	}{
		{"no choices", "choices", func(m *Meta) { m.Choices = 0 }},
		{"9 choices", "choices", func(m *Meta) { m.Choices = 9 }},
		{"bucket size 0", "bucket size", func(m *Meta) { m.BucketSize = 0 }},
		{"bucket size 9", "bucket size", func(m *Meta) { m.BucketSize = 9 }},
		{"no buckets", "table of 0", func(m *Meta) { m.Buckets = 0; m.Histogram = [][]uint64{{}} }},
		{"past 2^32 buckets", "table of", func(m *Meta) { m.Buckets = 2 * huge; m.Histogram[1][0] += 2*huge - 1000 }},
		{"no histogram", "histogram of 0 parts", func(m *Meta) { m.Histogram = nil }},
		{"more parts than choices", "histogram of 3 parts", func(m *Meta) { m.Histogram = append(m.Histogram, []uint64{0}) }},
		{"a load past 8", "loads", func(m *Meta) { m.Histogram[1] = append(m.Histogram[1], 0) }},
		{"parts of two lengths", "histogram parts of", func(m *Meta) { m.Histogram[1] = m.Histogram[1][:len(m.Histogram[1])-1] }},
		{"histogram short of the table", "the histogram counts", func(m *Meta) { m.Buckets++ }},
		{"histogram short of the entries", "the histogram counts", func(m *Meta) { m.Histogram[0][1]--; m.Histogram[0][0]++ }},
		{"a count past the table", "counts", func(m *Meta) { m.Histogram[0][0] += 1 << 63; m.Histogram[1][0] += 1 << 63 }},
		{"stash past the entries", "stash", func(m *Meta) { m.Stash = m.Entries + 1 }},
		// The table and histogram agree, and claim 2^40 entries (in the
		// stash) that a file of a few kilobytes cannot hold.
		{"entries past the file", "more than a file of", func(m *Meta) { m.Stash += 1<<40 - m.Entries; m.Entries = 1 << 40 }},
		{"negative bound", "max entries", func(m *Meta) { m.MaxEntries = -1 }},
		{"cache over its bound", "a cache of", func(m *Meta) { m.MaxEntries = int(m.Entries) - 1 }},
		{"cache bound below one slot a bucket", "a cache of", func(m *Meta) { m.MaxEntries = int(m.Buckets) - 1 }},
	}
	for _, tc := range cases {
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".db")
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		rewriteMeta(t, p, tc.change)
		r, err := Open(p, 0)
		if err == nil {
			r.Close()
			t.Errorf("%s: Open succeeded", tc.name)
			continue
		}
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want ErrCorrupt naming the file and %q", tc.name, err, tc.want)
		}
	}
	// The bounds leave room for real snapshots: a cache's bound of one
	// slot a bucket or more (the sample has 1000 buckets; a table that
	// grows towards its bound has fewer slots than it), and records as
	// small as records get.
	for _, maxE := range []int{1000, 8000, 1 << 20} {
		p := filepath.Join(dir, "cache.db")
		os.WriteFile(p, raw, 0o644)
		rewriteMeta(t, p, func(m *Meta) { m.MaxEntries = maxE })
		if _, _, err := read(p); err != nil {
			t.Errorf("a cache of %d entries in 1000 buckets: %v", maxE, err)
		}
	}
	tiny := filepath.Join(dir, "tiny.db")
	es := make([]entry, 20_000)
	for i := range es {
		es[i].bucket = StashBucket
	}
	write(t, tiny, es)
	fi, err := os.Stat(tiny)
	if err != nil {
		t.Fatal(err)
	}
	if _, got, err := read(tiny); err != nil || len(got) != len(es) {
		t.Fatalf("%d records of 5 bytes in %d bytes: %v", len(es), fi.Size(), err)
	}
	t.Logf("%d records of 5 bytes take %d bytes, %.1f a record (the bound assumes %d)", len(es), fi.Size(), float64(fi.Size())/float64(len(es)), minRecordBytes)
}
