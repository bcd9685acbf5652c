package store

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
)

// MapOptions configures a [Map]. The zero value is valid and means the
// defaults: go-left with 2 choices, buckets of 8 slots, seeded xxHash64
// under a random seed, a table that starts small and doubles.
type MapOptions struct {
	// SizeHint is how many entries the map is to hold before it first
	// grows, as make's size hint is for a Go map: NewMap allocates the
	// table whose growth threshold holds SizeHint keys, and Clear goes
	// back to it. A map filled to its hint pays for no growth, only for
	// the memory up front. 0 means the smallest table; at most
	// MaxSizeHint. OpenMap honours it too (see OpenMap).
	SizeHint int

	// Growth is the factor by which the table grows when it passes its
	// threshold: 0 means DefaultGrowth, 2, as a Go map grows; any value
	// from MinGrowth to MaxGrowth. A smaller factor keeps the table
	// fuller and the heap leaner, at the price of moving each key more
	// often over a growing map's life (docs/performance.md has the
	// figures of BenchmarkGrowthFactor).
	Growth float64

	// Placement is the rule that picks a new key's bucket among its
	// candidates. The zero value, bucket.Default, is go-left (one choice
	// when Choices is 1).
	Placement bucket.Placement

	// Choices is d, the number of candidate buckets of a key: 1 to 8,
	// default 2. bucket.OneChoice takes exactly 1.
	Choices int

	// BucketSize is the number of slots per bucket: 1 to 8, default 8.
	// Every bucket reserves room for 8 slots (the tags of a bucket fill
	// one 64-bit word), so a smaller size saves no memory: it is there to
	// study the rules.
	BucketSize int

	// Hash is the hash family; the zero value is hashfn.XXHash.
	Hash hashfn.Kind

	// Seed picks the hash function of the family. 0 means a random seed;
	// Options and the load report give the seed in use, and a table built
	// with that seed places every key the same way (except for key types
	// hashed by the maphash fallback: see NewMap).
	Seed uint64
}

// CacheOptions configures a [Cache] of keys K and values V. MaxEntries is
// required; every other zero field means its default, as for [MapOptions].
// It has the cache's types as parameters for the functions it may carry
// (see below), so a literal names them, and NewCache infers them from it:
//
//	c, err := store.NewCache(store.CacheOptions[string, []byte]{MaxEntries: 10_000})
type CacheOptions[K comparable, V any] struct {
	// MaxEntries bounds the cache: it never holds more, and a new key
	// that finds its candidate buckets full evicts one of their entries
	// (see "Eviction" in the package documentation). It must be at least
	// the number of buckets the rule needs (in practice, bounds below
	// Choices or just above are refused) and at most MaxCacheEntries.
	//
	// The table grows as entries arrive, up to the bound: an empty
	// cache holds a table of 1,024 slots, and a full one about 30 bytes
	// an entry plus the size of K and V (the header and policy word of
	// its slot, 6; its expiry, 8; its share of the ghost of evicted keys,
	// 16), and some 150 KiB for the miniature caches that tune the
	// eviction policy.
	MaxEntries int

	// MaxWeight, if not 0, bounds the cache in weight as well: the
	// weights of its entries, as Weigher weighs them, never add up to more
	// (see Cache.Weight), and to store a value a writer first evicts
	// entries until its weight fits. With bytes as the weight, it bounds
	// the cache's memory. Weigher is then required. MaxEntries still
	// bounds the number of entries and sizes the eviction policy's clock,
	// so set it near the number of entries the weight bound allows (the
	// bound in bytes over a typical entry's size): the table grows to it
	// as entries arrive, so a generous MaxEntries costs memory only if the
	// entries come. A value heavier than MaxWeight is not stored: its Set
	// removes the key's older value and counts, and reports to OnDeletion,
	// the new one as evicted at once.
	MaxWeight uint64

	// Weigher returns the weight of an entry, in the unit of MaxWeight
	// (bytes, say): called once per value stored, by the goroutine that
	// stores it, before it takes any lock. The cache keeps the weight
	// beside the entry, so a Weigher need not give the same answer twice.
	// A weight of 0 is allowed (the entry counts against MaxEntries
	// alone). Required with MaxWeight, refused without it.
	Weigher func(K, V) uint32

	// DefaultTTL is the time to live of an entry stored by Set, counted
	// from its write: 0 means entries do not expire unless set with
	// SetWithTTL.
	DefaultTTL time.Duration

	// ExpireAfterAccess, if positive, makes expiry sliding: an entry
	// stored by Set expires once it has gone ExpireAfterAccess without a
	// read or a write. A hit (Get, GetOrSet, GetOrLoad) pushes the
	// entry's expiry to ExpireAfterAccess from then, to a precision of a
	// 32nd of it: a read writes the entry's expiry only when that moves
	// it by more than ExpireAfterAccess/32, so that a hot key read from
	// many cores does not make them fight over its cache line, and an
	// entry read last at time r expires between r + 31/32·ExpireAfterAccess
	// and r + ExpireAfterAccess. A read slides every expiry it finds, that
	// of an entry set by SetWithTTL too; an entry without one (SetWithTTL
	// with ttl ≤ 0) never expires. It is DefaultTTL's sliding
	// counterpart: set one of the two, or an ExpiryCalculator.
	ExpireAfterAccess time.Duration

	// ExpiryCalculator, if not nil, gives each entry its own time to live,
	// from its key and value: when it is created, when a write replaces
	// its value, and when a read finds it (see [ExpiryCalculator]).
	// SetWithTTL wins over it: its ttl is the entry's. It replaces
	// DefaultTTL and ExpireAfterAccess, which must then be 0.
	ExpiryCalculator ExpiryCalculator[K, V]

	// RefreshAfter, if positive, keeps entries fresh through their
	// loader: GetOrLoad (and GetOrLoadAll) finding an entry written more
	// than RefreshAfter ago returns it at once, and reloads it in the
	// background with the loader it was given (see "Refresh" in
	// [Cache.GetOrLoad]). Other reads do not refresh. The entries' write
	// times take 8 bytes a slot, allocated only when RefreshAfter is set.
	RefreshAfter time.Duration

	// Clock tells the cache the time, for TTLs; nil means the system
	// clock. Tests inject one to control expiry.
	Clock Clock

	// OnDeletion, if not nil, is called once for every entry that leaves
	// the cache, with the entry and the cause: replaced by a Set or
	// Compute of its key, deleted (Delete, Compute), evicted to make room,
	// or expired (when its removal is noticed: see Cache.SetWithTTL). It
	// is called by the goroutine whose operation removed the entry, after
	// that operation released its locks and before it returns; an entry
	// expired or evicted while the table grows is reported by the
	// goroutine that grew it. Calls from different goroutines may run
	// concurrently and in any order, even for one key. Clear reports
	// none of the entries it drops. The function may use the cache.
	OnDeletion func(DeletionEvent[K, V])

	// StatsRecorder, if not nil, hears of every hit, miss, eviction and
	// load as it happens, to feed a metrics library's counters (see
	// StatsRecorder for which goroutine calls it and what it must not
	// do). Stats counts the same events whether it is set or not.
	StatsRecorder StatsRecorder

	// Ranking, if not empty, pins the eviction policy to one of the ways
	// of ranking candidates that Rankings lists: the cache starts with it
	// and never leaves it, while its miniatures go on rating every
	// ranking, so that Policy shows what each would have done on the
	// workload. The prior and relocation still adapt. Empty (the default)
	// lets the cache choose and move among the rankings as the workload
	// changes, which is what a cache should do unless its workload is
	// known; a pinned cache is for comparing rankings and for replays
	// that must not depend on the policy's choices. An unknown name is
	// refused with ErrOptions. OpenCache takes it from its options: a
	// snapshot does not record it.
	Ranking string

	// Placement, Choices, BucketSize, Hash and Seed shape the table, as
	// in MapOptions.
	Placement  bucket.Placement
	Choices    int
	BucketSize int
	Hash       hashfn.Kind
	Seed       uint64
}

// Sentinel errors, for errors.Is.
var (
	// ErrOptions is returned by NewMap, NewCache, OpenMap and OpenCache
	// for options they cannot use.
	ErrOptions = errors.New("store: invalid options")
)

// Defaults.
const (
	DefaultChoices    = 2
	DefaultBucketSize = slotsPerBucket
	DefaultPlacement  = bucket.GoLeft
	DefaultGrowth     = 2.0
)

// MinGrowth and MaxGrowth bound MapOptions.Growth. Below 1.25 a growth
// would come soon after the last one ended, each moving every key; above
// 4 a table just grown would be a quarter of its threshold full, most of
// its memory idle.
const (
	MinGrowth = 1.25
	MaxGrowth = 4.0
)

// MaxCacheEntries is the largest CacheOptions.MaxEntries, 2^28: NewCache
// rejects a larger bound with ErrOptions before allocating anything (a
// cache of uint64 → uint64 at this bound takes 9.5 GiB). It bounds what
// one call allocates; the eviction policy's clock counts in units of at
// least a 1,024th of the capacity (evict.go), so it tells ages apart at
// any bound.
const MaxCacheEntries = 1 << 28

// MaxSizeHint is the largest MapOptions.SizeHint, 2^28: like a cache's
// bound, a hint is memory allocated up front, and a larger one is more
// likely a mistake than a plan; a map grows past its hint as far as its
// keys take it.
const MaxSizeHint = 1 << 28

// config is the options of either type in one form, for the code they
// share: sizes, thresholds, snapshots. MaxEntries > 0 marks a cache's.
type config struct {
	MaxEntries int
	MaxWeight  int64 // a cache's weight bound; 0: none
	SizeHint   int
	Growth     float64
	DefaultTTL time.Duration
	Clock      Clock
	Placement  bucket.Placement
	Choices    int
	BucketSize int
	Hash       hashfn.Kind
	Seed       uint64

	// A cache's sliding expiry and refresh age (CacheOptions).
	ExpireAfterAccess, RefreshAfter time.Duration
	// A cache's pinned ranking (CacheOptions.Ranking); empty: none.
	Ranking string
}

func (o MapOptions) config() config {
	return config{SizeHint: o.SizeHint, Growth: o.Growth, Placement: o.Placement, Choices: o.Choices,
		BucketSize: o.BucketSize, Hash: o.Hash, Seed: o.Seed}
}

func (o CacheOptions[K, V]) config() config {
	return config{MaxEntries: o.MaxEntries, MaxWeight: int64(min(o.MaxWeight, math.MaxInt64)), DefaultTTL: o.DefaultTTL,
		ExpireAfterAccess: o.ExpireAfterAccess, RefreshAfter: o.RefreshAfter, Clock: o.Clock, Placement: o.Placement,
		Choices: o.Choices, BucketSize: o.BucketSize, Hash: o.Hash, Seed: o.Seed, Ranking: o.Ranking}
}

func (o *config) mapOptions() MapOptions {
	return MapOptions{SizeHint: o.SizeHint, Growth: o.Growth, Placement: o.Placement, Choices: o.Choices,
		BucketSize: o.BucketSize, Hash: o.Hash, Seed: o.Seed}
}

// cacheOptionsOf returns the options of o in a cache's form; the fields
// that are functions of K and V, which config does not hold, are nil.
func cacheOptionsOf[K comparable, V any](o *config) CacheOptions[K, V] {
	return CacheOptions[K, V]{MaxEntries: o.MaxEntries, MaxWeight: uint64(o.MaxWeight), DefaultTTL: o.DefaultTTL,
		ExpireAfterAccess: o.ExpireAfterAccess, RefreshAfter: o.RefreshAfter, Clock: o.Clock, Placement: o.Placement,
		Choices: o.Choices, BucketSize: o.BucketSize, Hash: o.Hash, Seed: o.Seed, Ranking: o.Ranking}
}

// resolve returns o with the defaults filled in, or an error that
// wraps ErrOptions and says what is wrong.
func (o MapOptions) resolve() (config, error) {
	c := o.config()
	switch {
	case o.SizeHint < 0:
		return c, fmt.Errorf("%w: SizeHint %d is negative", ErrOptions, o.SizeHint)
	case o.SizeHint > MaxSizeHint:
		return c, fmt.Errorf("%w: SizeHint %d is above MaxSizeHint (%d)", ErrOptions, o.SizeHint, MaxSizeHint)
	}
	if err := checkGrowth(o.Growth); err != nil {
		return c, err
	}
	if c.Growth == 0 {
		c.Growth = DefaultGrowth
	}
	return c, c.resolveTable()
}

// resolve returns o with the defaults filled in, or an error that wraps
// ErrOptions and says what is wrong.
func (o CacheOptions[K, V]) resolve() (config, error) {
	switch {
	case o.MaxWeight > math.MaxInt64:
		return o.config(), fmt.Errorf("%w: MaxWeight %d is above %d", ErrOptions, o.MaxWeight, int64(math.MaxInt64))
	case o.MaxWeight > 0 && o.Weigher == nil:
		return o.config(), fmt.Errorf("%w: MaxWeight %d needs a Weigher to weigh the entries", ErrOptions, o.MaxWeight)
	case o.MaxWeight == 0 && o.Weigher != nil:
		return o.config(), fmt.Errorf("%w: a Weigher without MaxWeight bounds nothing", ErrOptions)
	}
	if err := o.checkExpiry(); err != nil {
		return o.config(), err
	}
	return resolveCache(o.config())
}

// checkExpiry returns an error wrapping ErrOptions if o asks for more than
// one kind of expiry: DefaultTTL, ExpireAfterAccess and ExpiryCalculator
// are three ways to give entries their time to live.
func (o *CacheOptions[K, V]) checkExpiry() error {
	if o.ExpiryCalculator != nil && (o.DefaultTTL != 0 || o.ExpireAfterAccess != 0) {
		return fmt.Errorf("%w: ExpiryCalculator with DefaultTTL %v and ExpireAfterAccess %v (the calculator gives every TTL: set neither)",
			ErrOptions, o.DefaultTTL, o.ExpireAfterAccess)
	}
	return nil
}

// resolveCache is CacheOptions.resolve on the options' scalar fields.
func resolveCache(o config) (config, error) {
	c := o
	switch {
	case o.MaxEntries <= 0:
		return c, fmt.Errorf("%w: MaxEntries %d (a cache needs a bound of at least 1; for no bound, use a Map)", ErrOptions, o.MaxEntries)
	case o.MaxEntries > MaxCacheEntries:
		// Checked before anything is allocated.
		return c, fmt.Errorf("%w: MaxEntries %d is above MaxCacheEntries (%d)", ErrOptions, o.MaxEntries, MaxCacheEntries)
	case o.DefaultTTL < 0:
		return c, fmt.Errorf("%w: DefaultTTL %v is negative", ErrOptions, o.DefaultTTL)
	case o.ExpireAfterAccess < 0:
		return c, fmt.Errorf("%w: ExpireAfterAccess %v is negative", ErrOptions, o.ExpireAfterAccess)
	case o.DefaultTTL > 0 && o.ExpireAfterAccess > 0:
		return c, fmt.Errorf("%w: DefaultTTL %v and ExpireAfterAccess %v (expiry after write or after access: set one)",
			ErrOptions, o.DefaultTTL, o.ExpireAfterAccess)
	case o.RefreshAfter < 0:
		return c, fmt.Errorf("%w: RefreshAfter %v is negative", ErrOptions, o.RefreshAfter)
	}
	if _, err := rankingIndex(o.Ranking); err != nil {
		return c, err
	}
	if err := c.resolveTable(); err != nil {
		return c, err
	}
	if _, _, _, err := cacheSize(&c); err != nil {
		return c, err
	}
	return c, nil
}

// resolveTable fills in the table's shape: the fields both types share.
func (o *config) resolveTable() error {
	if o.Choices == 0 {
		o.Choices = DefaultChoices
	}
	if !o.Placement.Valid() {
		return fmt.Errorf("%w: %w: %d", ErrOptions, bucket.ErrPlacement, uint8(o.Placement))
	}
	o.Placement = o.Placement.Resolve(o.Choices)
	if err := o.Placement.CheckChoices(o.Choices); err != nil {
		return fmt.Errorf("%w: %w", ErrOptions, err)
	}
	if o.BucketSize == 0 {
		o.BucketSize = DefaultBucketSize
	}
	if o.BucketSize < 1 || o.BucketSize > slotsPerBucket {
		return fmt.Errorf("%w: BucketSize %d (want 1 to %d)", ErrOptions, o.BucketSize, slotsPerBucket)
	}
	if !o.Hash.Valid() {
		return fmt.Errorf("%w: %w: %d", ErrOptions, hashfn.ErrUnknownKind, uint8(o.Hash))
	}
	if o.Seed == 0 {
		o.Seed = randomSeed()
	}
	if _, err := hashfn.New(o.Hash, o.Seed); err != nil {
		return fmt.Errorf("%w: %w", ErrOptions, err)
	}
	return nil
}

// checkGrowth returns an error wrapping ErrOptions unless g is 0 (the
// default) or in [MinGrowth, MaxGrowth].
func checkGrowth(g float64) error {
	if g != 0 && !(g >= MinGrowth && g <= MaxGrowth) { // NaN fails both
		return fmt.Errorf("%w: Growth %v (want %v to %v, or 0 for %v)", ErrOptions, g, MinGrowth, MaxGrowth, DefaultGrowth)
	}
	return nil
}

// randomSeed returns a seed no one can predict (math/rand/v2's generator
// is ChaCha8, seeded by the system), never 0, which the options read as
// "draw one".
func randomSeed() uint64 {
	for {
		if x := rand.Uint64(); x != 0 {
			return x
		}
	}
}
