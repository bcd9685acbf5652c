package tier

import (
	"github.com/redis/rueidis"

	"github.com/twochoice/twochoice/store/tier/internal/near"
)

// Options bounds a near-cache; the zero value means DefaultMaxBytes.
type Options = near.Options

// Stats are a near-cache's counters, for all the connections it serves.
type Stats = near.Stats

// DefaultMaxBytes bounds a near-cache whose Options set no bound.
const DefaultMaxBytes = near.DefaultMaxBytes

// ErrOptions is returned by New for options it cannot use.
var ErrOptions = near.ErrOptions

// Tier is a near-cache for rueidis clients: pass its NewCacheStore as
// rueidis.ClientOption.NewCacheStoreFn. One Tier may serve several
// clients; its bound holds for all of them together.
type Tier struct {
	c *near.Cache[rueidis.RedisMessage]
}

// New returns a near-cache bounded by o. It allocates the cache's whole
// table now (see Options.MaxBytes).
func New(o Options) (*Tier, error) {
	c, err := near.New(o, pxat.Ops())
	if err != nil {
		return nil, err
	}
	return &Tier{c: c}, nil
}

// Capacity returns the bound in entries (keys) that o comes to.
func Capacity(o Options) (int, error) { return near.Capacity[rueidis.RedisMessage](o) }

// NewCacheStore returns the cache store of one connection, as rueidis asks
// for each connection it opens. The option's CacheSizeEachConn is not
// used: the Tier's Options bound all connections together.
func (t *Tier) NewCacheStore(rueidis.CacheStoreOption) rueidis.CacheStore {
	return near.NewStore(t.c.NewConn(), entry)
}

// Stats returns the near-cache's counters.
func (t *Tier) Stats() Stats { return t.c.Stats() }

// cacheStore is one connection's rueidis.CacheStore.
type cacheStore = near.Store[rueidis.RedisMessage, *rueidis.RedisMessage, rueidis.CacheEntry]

var _ rueidis.CacheStore = (*cacheStore)(nil)

// entry hands out a flight as the rueidis.CacheEntry to wait for.
func entry(f *near.Flight[rueidis.RedisMessage]) rueidis.CacheEntry { return f }
