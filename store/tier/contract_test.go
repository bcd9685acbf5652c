package tier

import (
	"testing"

	"github.com/redis/rueidis"

	"github.com/twochoice/twochoice/store/tier/internal/cachestoretest"
)

type contractStore = cachestoretest.Store[rueidis.RedisMessage, rueidis.CacheEntry]

func TestCacheStoreContract(t *testing.T) {
	run := cachestoretest.Run[rueidis.RedisMessage, *rueidis.RedisMessage, rueidis.CacheEntry]
	// rueidis's own adapter first: it shows the restated contract is the
	// one rueidis holds its stores to.
	t.Run("rueidis-simple-adapter", func(t *testing.T) {
		run(t, func() contractStore {
			return rueidis.NewSimpleCacheAdapter(cachestoretest.NewSimple[rueidis.RedisMessage]())
		})
	})
	t.Run("tier", func(t *testing.T) {
		tr, err := New(Options{MaxEntries: 1024})
		if err != nil {
			t.Fatal(err)
		}
		run(t, func() contractStore { return tr.NewCacheStore(rueidis.CacheStoreOption{}) })
	})
}
