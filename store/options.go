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
	//
	// New allocates a cache's whole table at once, so MaxEntries is
	// memory taken up front, used or not: about 30 bytes an entry plus
	// the size of K and V (the header and policy words of its bucket, 6;
	// its expiry, 8; its share of the ghost of evicted keys, 16), and
	// some 150 KiB for the miniature caches that tune the eviction policy
	// (shadow.go). It is at most MaxCacheEntries.
	MaxEntries int

	// SizeHint is how many entries an unbounded store is to hold before
	// it first grows, as make's size hint is for a map: New allocates
	// the table whose growth threshold holds SizeHint keys, the size the
	// store would have grown to by then, and Clear goes back to it. A
	// store filled to its hint then pays for no growth (the keys' moves
	// from table to table), only for the memory up front. 0 means the
	// smallest table. A cache's table is sized by MaxEntries, so New
	// rejects SizeHint with MaxEntries > 0, and a hint above MaxSizeHint.
	// Open honours it too: a snapshot whose table is smaller than the
	// hint's is restored into the hint's table (see Open).
	SizeHint int

	// Growth is the factor by which an unbounded store's table grows
	// when it passes its threshold: 0 means DefaultGrowth, 2, as a Go
	// map grows; any value from MinGrowth to MaxGrowth, 1.25 to 4. A
	// smaller factor keeps the table fuller and the heap leaner, at the
	// price of moving each key more often over a growing store's life:
	// by 1.5, 44.4 bytes an entry at 1M string→int64 keys against 54.5
	// by 2 (a Go map: 55.8), and a fill of 10M new keys took 2.0–2.3
	// times a Go map's time against 1.6 by 2 (store/PERFORMANCE.md).
	// How full a table is just after a growth is 1/Growth of its
	// threshold, so the heap per entry swings with the phase either way.
	// A cache never grows: New rejects Growth with MaxEntries > 0.
	Growth float64

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
	DefaultGrowth     = 2.0
)

// MinGrowth and MaxGrowth bound Options.Growth. Below 1.25 a growth
// would come soon after the last one ended, each moving every key; above
// 4 a table just grown would be a quarter of its threshold full, most of
// its memory idle.
const (
	MinGrowth = 1.25
	MaxGrowth = 4.0
)

// MaxCacheEntries is the largest Options.MaxEntries, 2^28 (268,435,456):
// New rejects a larger bound with ErrOptions before allocating anything
// (a cache of uint64 → uint64 at this bound takes 9.5 GiB). The limit
// came from the eviction policy's ticks, once 32-bit counts of inserts;
// policy words now count in units of at least a 1,024th of the capacity,
// in 20 bits (evict.go), so ages are told apart up to over 1,000
// capacities at any bound, and the limit stays as a bound on what one
// call to New allocates.
const MaxCacheEntries = 1 << 28

// MaxSizeHint is the largest Options.SizeHint, 2^28: like a cache's
// bound (MaxCacheEntries), a hint is memory allocated up front, and a
// larger one is more likely a mistake than a plan; a store grows past
// its hint as far as its keys take it.
const MaxSizeHint = 1 << 28

// resolve returns o with the defaults filled in, or an error that wraps
// ErrOptions and says what is wrong.
func (o Options) resolve() (Options, error) {
	switch {
	case o.MaxEntries < 0:
		return o, fmt.Errorf("%w: MaxEntries %d is negative", ErrOptions, o.MaxEntries)
	case o.DefaultTTL < 0:
		return o, fmt.Errorf("%w: DefaultTTL %v is negative", ErrOptions, o.DefaultTTL)
	case o.SizeHint < 0:
		return o, fmt.Errorf("%w: SizeHint %d is negative", ErrOptions, o.SizeHint)
	case o.SizeHint > MaxSizeHint:
		return o, fmt.Errorf("%w: SizeHint %d is above MaxSizeHint (%d)", ErrOptions, o.SizeHint, MaxSizeHint)
	case o.SizeHint > 0 && o.MaxEntries > 0:
		return o, fmt.Errorf("%w: SizeHint is for unbounded stores (a cache's table is sized by MaxEntries)", ErrOptions)
	case o.DefaultTTL > 0 && o.MaxEntries == 0:
		return o, fmt.Errorf("%w: DefaultTTL needs a bounded store (MaxEntries > 0)", ErrOptions)
	}
	if err := checkGrowth(o.Growth); err != nil {
		return o, err
	}
	switch {
	case o.Growth != 0 && o.MaxEntries > 0:
		return o, fmt.Errorf("%w: Growth is for unbounded stores (a cache never grows)", ErrOptions)
	case o.Growth == 0 && o.MaxEntries == 0:
		o.Growth = DefaultGrowth
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
	// A cache's table is allocated whole by New: checked here, before
	// anything is allocated (see MaxCacheEntries). The bound is far
	// below the most slots a table can have (2^32 buckets), where sizes
	// would wrap around.
	if o.MaxEntries > MaxCacheEntries {
		return o, fmt.Errorf("%w: MaxEntries %d is above MaxCacheEntries (%d)", ErrOptions, o.MaxEntries, MaxCacheEntries)
	}
	if !o.Hash.Valid() {
		return o, fmt.Errorf("%w: %w: %d", ErrOptions, hashfn.ErrUnknownKind, uint8(o.Hash))
	}
	for o.Seed == 0 {
		o.Seed = rand.Uint64()
	}
	return o, nil
}

// checkGrowth returns an error wrapping ErrOptions unless g is 0 (the
// default) or in [MinGrowth, MaxGrowth].
func checkGrowth(g float64) error {
	if g != 0 && !(g >= MinGrowth && g <= MaxGrowth) { // NaN fails both
		return fmt.Errorf("%w: Growth %v (want %v to %v, or 0 for %v)", ErrOptions, g, MinGrowth, MaxGrowth, DefaultGrowth)
	}
	return nil
}
