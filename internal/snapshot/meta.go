package snapshot

import "time"

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
	// MaxEntries is the store's bound (0: unbounded).
	MaxEntries int `codec:"max_entries" json:"max_entries"`
	// Created is when the snapshot's view was taken, in Unix nanoseconds.
	Created int64 `codec:"created" json:"created"`
	// Histogram[j][k] is the number of buckets of part j holding k entries.
	Histogram [][]uint64 `codec:"histogram" json:"histogram"`
	// Checksum is xxHash64 over the records (see the package doc).
	Checksum uint64 `codec:"checksum" json:"checksum"`
}

// CreatedTime returns Created as a time.Time.
func (m *Meta) CreatedTime() time.Time { return time.Unix(0, m.Created) }
