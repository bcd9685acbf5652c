package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
)

// Options configures a [Store]. The zero value is valid and means the
// defaults: an unbounded store under [bucket.GoLeft] with 2 choices, buckets
// of 8 slots, seeded xxHash64 and a random seed.
type Options struct {
	// MaxEntries bounds the store: 0 means unbounded (the table grows).
	// A positive value makes the store a cache of at most MaxEntries
	// entries that never grows: a new key that finds its candidate
	// buckets full evicts one of their entries (see evict.go and the
	// package documentation's "Cache mode"). Every bucket needs a slot,
	// so New rejects a bound below the number of buckets the rule needs
	// (about MaxEntries / 8 rounded up to a size the rule accepts; buckets
	// get more slots than BucketSize when that is what it takes): in
	// practice, bounds below Choices or just above it.
	MaxEntries int

	// DefaultTTL is the time to live of an entry stored by Set in a
	// bounded store: 0 means entries do not expire unless set with
	// SetWithTTL. It needs MaxEntries > 0.
	DefaultTTL time.Duration

	// Clock tells a bounded store the time, for TTLs; nil means the
	// system clock. Tests inject one to control expiry.
	Clock Clock

	// Placement is the rule that picks a new key's bucket among its
	// candidates. Its zero value, bucket.OneChoice, means the default
	// bucket.GoLeft unless Choices is 1: to run the one-choice baseline,
	// set Choices to 1.
	Placement bucket.Placement

	// Choices is d, the number of candidate buckets of a key: 1 to 8,
	// default 2. bucket.OneChoice takes exactly 1.
	Choices int

	// BucketSize is the number of slots per bucket: 1 to 8, default 8.
	// Every bucket reserves room for 8 slots (the tags of a bucket fill one
	// 64-bit word), so a smaller size saves no memory: it is there to
	// study the rules, not to save space.
	BucketSize int

	// Hash is the hash family; the zero value is hashfn.XXHash.
	Hash hashfn.Kind

	// Seed picks the hash function of the family. 0 means a random seed
	// for this store; [Store.Seed] and the load report give the seed in use,
	// and a store built with that seed places every key the same way
	// (except for key types hashed by the maphash fallback, see [New]).
	Seed uint64
}

// Sentinel errors, for errors.Is.
var (
	// ErrOptions is returned by New for options it cannot use.
	ErrOptions = errors.New("store: invalid options")
	// ErrUnbounded is what SetWithTTL panics with on an unbounded store
	// (MaxEntries 0): expiry is a feature of the cache mode, and calling it
	// there is a programming error, like a write to a nil map.
	ErrUnbounded = errors.New("store: TTLs need a bounded store (MaxEntries > 0)")
)

// Defaults.
const (
	DefaultChoices    = 2
	DefaultBucketSize = slotsPerBucket
	DefaultPlacement  = bucket.GoLeft
)

// resolve returns o with the defaults filled in, or an error that wraps
// ErrOptions and says what is wrong.
func (o Options) resolve() (Options, error) {
	switch {
	case o.MaxEntries < 0:
		return o, fmt.Errorf("%w: MaxEntries %d is negative", ErrOptions, o.MaxEntries)
	case o.DefaultTTL < 0:
		return o, fmt.Errorf("%w: DefaultTTL %v is negative", ErrOptions, o.DefaultTTL)
	case o.DefaultTTL > 0 && o.MaxEntries == 0:
		return o, fmt.Errorf("%w: DefaultTTL needs a bounded store (MaxEntries > 0)", ErrOptions)
	}
	if o.Choices == 0 {
		o.Choices = DefaultChoices
	}
	if o.Placement == bucket.OneChoice && o.Choices != 1 {
		o.Placement = DefaultPlacement
	}
	if err := o.Placement.CheckChoices(o.Choices); err != nil {
		return o, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	if o.BucketSize == 0 {
		o.BucketSize = DefaultBucketSize
	}
	if o.BucketSize < 1 || o.BucketSize > slotsPerBucket {
		return o, fmt.Errorf("%w: BucketSize %d (want 1 to %d)", ErrOptions, o.BucketSize, slotsPerBucket)
	}
	// A cache's table is allocated whole by New: past the most slots a
	// table can have, its size would wrap around (and the sketch sized
	// from MaxEntries would overflow), so such a bound is an error, not
	// a panic or a crash.
	if most := uint64(hashfn.MaxBuckets) * uint64(o.BucketSize); o.MaxEntries > 0 && uint64(o.MaxEntries) > most {
		return o, fmt.Errorf("%w: MaxEntries %d is above %d, the most a table of buckets of %d slots holds", ErrOptions, o.MaxEntries, most, o.BucketSize)
	}
	if !o.Hash.Valid() {
		return o, fmt.Errorf("%w: %w: %d", ErrOptions, hashfn.ErrUnknownKind, uint8(o.Hash))
	}
	for o.Seed == 0 {
		o.Seed = rand.Uint64()
	}
	return o, nil
}
