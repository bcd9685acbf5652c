package snapshot

import (
	"fmt"
	"time"

	"github.com/twochoice/twochoice/hashfn"
)

// Version is the format version this package writes, and the newest it reads.
const Version = 1

// FormatName is stored under meta/format.
const FormatName = "twochoice-snapshot"

var (
	bucketMeta    = []byte("meta")
	bucketEntries = []byte("entries")
	keyFormat     = []byte("format")
	keyVersion    = []byte("version")
	keyMeta       = []byte("meta")
)

// Meta describes a snapshot: the store's configuration and its state when
// the snapshot was taken.
type Meta struct {
	Version    int    `codec:"version" json:"version"`
	KeyType    string `codec:"key_type" json:"key_type"`
	ValueType  string `codec:"value_type" json:"value_type"`
	Placement  string `codec:"placement" json:"placement"`
	Choices    int    `codec:"choices" json:"choices"`
	BucketSize int    `codec:"bucket_size" json:"bucket_size"`
	Hash       string `codec:"hash" json:"hash"`
	Seed       uint64 `codec:"seed" json:"seed"`
	// Buckets is the table size: the number of buckets.
	Buckets uint64 `codec:"buckets" json:"buckets"`
	// Entries is the number of records, Stash how many of them were in the
	// stash.
	Entries uint64 `codec:"entries" json:"entries"`
	Stash   uint64 `codec:"stash" json:"stash"`
	// MaxEntries is a cache's bound (0: a map, unbounded).
	MaxEntries int `codec:"max_entries" json:"max_entries"`
	// DefaultTTL is a cache's default time to live in nanoseconds (0:
	// none). Files written before it was recorded have none.
	DefaultTTL int64 `codec:"default_ttl,omitempty" json:"default_ttl,omitempty"`
	// MaxWeight is a cache's bound in weight (0: none).
	MaxWeight int64 `codec:"max_weight,omitempty" json:"max_weight,omitempty"`
	// ExpireAfterAccess and RefreshAfter are a cache's sliding time to
	// live and refresh age in nanoseconds (0: none), as DefaultTTL.
	ExpireAfterAccess int64 `codec:"expire_after_access,omitempty" json:"expire_after_access,omitempty"`
	RefreshAfter      int64 `codec:"refresh_after,omitempty" json:"refresh_after,omitempty"`
	// Created is when the snapshot's view was taken, in Unix nanoseconds.
	Created int64 `codec:"created" json:"created"`
	// Histogram[j][k] is the number of buckets of part j holding k entries.
	Histogram [][]uint64 `codec:"histogram" json:"histogram"`
	// Checksum is xxHash64 over the records (see the package doc).
	Checksum uint64 `codec:"checksum" json:"checksum"`
	// KeyDesc and ValueDesc describe the shapes of the key and value
	// types (typedesc.go). Files written before they were recorded have
	// neither, and readers then compare KeyType and ValueType alone.
	KeyDesc   *TypeDesc `codec:"key_desc,omitempty" json:"key_desc,omitempty"`
	ValueDesc *TypeDesc `codec:"value_desc,omitempty" json:"value_desc,omitempty"`
}

// CreatedTime returns Created as a time.Time.
func (m *Meta) CreatedTime() time.Time { return time.Unix(0, m.Created) }

// MaxBucketSize is the most slots a bucket of a snapshot's table has: a
// store's buckets have 8 (package store checks that it agrees).
const MaxBucketSize = 8

// minRecordBytes is the least a record takes in the file: bbolt gives each
// key-value pair of a leaf page a 16-byte header, and the key is the 8-byte
// sequence number (the record itself, at least 5 bytes of msgpack, is not
// counted, to leave room). A file of s bytes holds at most s/minRecordBytes
// records.
const minRecordBytes = 16 + 8

// check tests the metadata's claims against each other, the format's
// limits and the size of the file, before a reader allocates anything by
// them: the metadata is not covered by the records' checksum, and a file
// of a few kilobytes must not make a reader set aside gigabytes. The
// counts of records and their buckets are checked later, as they are read
// ([Reader.ForEach] and the readers of the records); check bounds what can
// be bounded without them:
//
//   - choices, bucket size and table size within the format's limits
//     (hashfn.MaxChoices, MaxBucketSize, hashfn.MaxBuckets);
//   - a histogram of at most d parts, all of one length of at most
//     MaxBucketSize+1 loads, which counts Buckets buckets holding
//     Entries - Stash entries;
//   - no more entries than the file has room for (minRecordBytes each);
//   - for a cache (MaxEntries > 0): at most MaxEntries entries, and at
//     least one slot of the bound per bucket (a cache's table has up to
//     MaxBucketSize slots a bucket, and fewer slots than its bound while it
//     grows towards it: store.CacheOptions.MaxEntries).
//
// A table can still be far larger than its entries: a store's table never
// shrinks as keys are deleted, so a store that grew and then lost most of
// its keys is saved that way. Readers that build a table from a snapshot
// must not trust the table size alone (see store.OpenMap).
func (m *Meta) check(fileSize int64) error {
	switch {
	case m.Choices < 1 || m.Choices > hashfn.MaxChoices:
		return fmt.Errorf("%d choices (want 1 to %d)", m.Choices, hashfn.MaxChoices)
	case m.BucketSize < 1 || m.BucketSize > MaxBucketSize:
		return fmt.Errorf("bucket size %d (want 1 to %d)", m.BucketSize, MaxBucketSize)
	case m.Buckets < 1 || m.Buckets > hashfn.MaxBuckets:
		return fmt.Errorf("a table of %d buckets (want 1 to 2^32)", m.Buckets)
	case len(m.Histogram) < 1 || len(m.Histogram) > m.Choices:
		return fmt.Errorf("a histogram of %d parts for %d choices", len(m.Histogram), m.Choices)
	case m.Stash > m.Entries:
		return fmt.Errorf("%d entries in the stash, of %d", m.Stash, m.Entries)
	case fileSize >= 0 && m.Entries > uint64(fileSize)/minRecordBytes:
		return fmt.Errorf("%d entries claimed, more than a file of %d bytes holds", m.Entries, fileSize)
	case m.MaxEntries < 0:
		return fmt.Errorf("max entries %d", m.MaxEntries)
	case m.DefaultTTL < 0 || m.DefaultTTL > 0 && m.MaxEntries == 0:
		return fmt.Errorf("default TTL %d ns with max entries %d", m.DefaultTTL, m.MaxEntries)
	case m.MaxWeight < 0 || m.MaxWeight > 0 && m.MaxEntries == 0:
		return fmt.Errorf("max weight %d with max entries %d", m.MaxWeight, m.MaxEntries)
	case m.ExpireAfterAccess < 0 || m.ExpireAfterAccess > 0 && (m.MaxEntries == 0 || m.DefaultTTL > 0):
		return fmt.Errorf("expire after access %d ns with default TTL %d ns and max entries %d", m.ExpireAfterAccess, m.DefaultTTL, m.MaxEntries)
	case m.RefreshAfter < 0 || m.RefreshAfter > 0 && m.MaxEntries == 0:
		return fmt.Errorf("refresh after %d ns with max entries %d", m.RefreshAfter, m.MaxEntries)
	case m.MaxEntries > 0 && (m.Entries > uint64(m.MaxEntries) || m.Buckets > uint64(m.MaxEntries)):
		return fmt.Errorf("a cache of %d entries with %d entries in %d buckets", m.MaxEntries, m.Entries, m.Buckets)
	}
	// Every count is at most Buckets ≤ 2^32 and every load at most 8, so
	// the sums below cannot overflow.
	var buckets, keys uint64
	for p, row := range m.Histogram {
		if len(row) > MaxBucketSize+1 {
			return fmt.Errorf("histogram part %d has %d loads (buckets hold at most %d)", p, len(row), MaxBucketSize)
		}
		if len(row) != len(m.Histogram[0]) {
			return fmt.Errorf("histogram parts of %d and %d loads", len(m.Histogram[0]), len(row))
		}
		for k, c := range row {
			if c > m.Buckets {
				return fmt.Errorf("histogram part %d counts %d buckets of load %d, of %d", p, c, k, m.Buckets)
			}
			buckets += c
			keys += uint64(k) * c
		}
	}
	if buckets != m.Buckets || keys != m.Entries-m.Stash {
		return fmt.Errorf("the histogram counts %d buckets holding %d entries; the metadata says %d buckets, %d entries and %d in the stash",
			buckets, keys, m.Buckets, m.Entries, m.Stash)
	}
	return nil
}
