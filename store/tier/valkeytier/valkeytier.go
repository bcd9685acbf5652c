// Package valkeytier is the near-cache of package tier for valkey-go
// clients: the same cache, the same promises, behind valkey-go's
// CacheStore (valkey-go is a fork of rueidis, and its cache-store
// contract is rueidis's). See package tier for the documentation.
package valkeytier

import (
	"github.com/valkey-io/valkey-go"

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

// pxat sets the expiry of the replies the near-cache hands out (see
// near.PXATWriter).
var pxat near.PXATWriter[valkey.ValkeyMessage, *valkey.ValkeyMessage]

// Tier is a near-cache for valkey-go clients: pass its NewCacheStore as
// valkey.ClientOption.NewCacheStoreFn. One Tier may serve several
// clients; its bound holds for all of them together.
type Tier struct {
	c *near.Cache[valkey.ValkeyMessage]
}

// New returns a near-cache bounded by o. It allocates the cache's whole
// table now.
func New(o Options) (*Tier, error) {
	c, err := near.New(o, pxat.Ops())
	if err != nil {
		return nil, err
	}
	return &Tier{c: c}, nil
}

// NewCacheStore returns the cache store of one connection, as valkey-go
// asks for each connection it opens. The option's CacheSizeEachConn is not
// used: the Tier's Options bound all connections together.
func (t *Tier) NewCacheStore(valkey.CacheStoreOption) valkey.CacheStore {
	return near.NewStore(t.c.NewConn(), entry)
}

// Stats returns the near-cache's counters.
func (t *Tier) Stats() Stats { return t.c.Stats() }

// cacheStore is one connection's valkey.CacheStore.
type cacheStore = near.Store[valkey.ValkeyMessage, *valkey.ValkeyMessage, valkey.CacheEntry]

var _ valkey.CacheStore = (*cacheStore)(nil)

// entry hands out a flight as the valkey.CacheEntry to wait for.
func entry(f *near.Flight[valkey.ValkeyMessage]) valkey.CacheEntry { return f }
