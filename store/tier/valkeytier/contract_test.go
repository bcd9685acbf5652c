package valkeytier

import (
	"testing"

	"github.com/valkey-io/valkey-go"

	"github.com/twochoice/twochoice/store/tier/internal/cachestoretest"
)

type contractStore = cachestoretest.Store[valkey.ValkeyMessage, valkey.CacheEntry]

func TestCacheStoreContract(t *testing.T) {
	run := cachestoretest.Run[valkey.ValkeyMessage, *valkey.ValkeyMessage, valkey.CacheEntry]
	// valkey-go's own adapter first: it shows the restated contract is the
	// one valkey-go holds its stores to.
	t.Run("valkey-simple-adapter", func(t *testing.T) {
		run(t, func() contractStore {
			return valkey.NewSimpleCacheAdapter(cachestoretest.NewSimple[valkey.ValkeyMessage]())
		})
	})
	t.Run("tier", func(t *testing.T) {
		tr, err := New(Options{MaxEntries: 1024})
		if err != nil {
			t.Fatal(err)
		}
		run(t, func() contractStore { return tr.NewCacheStore(valkey.CacheStoreOption{}) })
	})
}
