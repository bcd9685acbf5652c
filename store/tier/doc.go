// Package tier makes a twochoice cache the near-cache of a Redis or Valkey
// server (standalone or cluster) for rueidis clients: the local cache of
// server-assisted client-side caching, which the server keeps coherent by
// telling the client when a key it read has changed. Package valkeytier is
// the same for valkey-go clients.
//
//	nc, err := tier.New(tier.Options{MaxBytes: 64 << 20})
//	client, err := rueidis.NewClient(rueidis.ClientOption{
//		InitAddress:     []string{"127.0.0.1:6379"},
//		NewCacheStoreFn: nc.NewCacheStore,
//	})
//	v, err := client.DoCache(ctx, client.B().Get().Key("k").Cache(), time.Minute).ToString()
//
// rueidis does the protocol: it turns tracking on for each connection
// (RESP3 CLIENT TRACKING, opt-in), reads a cacheable command together with
// the key's PTTL, and hands the server's invalidations, and the loss of a
// connection, to the connection's CacheStore. The Tier is that store, for
// every connection of the client at once, with its entries in one bounded
// twochoice cache.
//
// # What it promises
//
//   - A read that starts after the client has handled the invalidation of
//     a write sees that write or a later one. The server sends a
//     connection's invalidations in order with its replies, so a reply
//     cached before a write is dropped when the write's invalidation
//     arrives, and a reply read after the write is never older than it.
//   - A lost connection drops all it had cached (the server no longer
//     tracks its keys, and will not say when they change): no reply read
//     before a disconnection is served after it. So does an invalidation
//     of all keys (FLUSHALL, FLUSHDB, or a server that lost its tracking
//     table).
//   - A reply expires at the earlier of the key's expiry on the server
//     (its PTTL) and the read's ttl.
//   - Identical reads issued while one is in flight wait for it (rueidis's
//     single flight), per connection.
//
// # What it does not promise
//
//   - Writes go to the server, not through the near-cache, and are not
//     transactional with it: between a write and the arrival of its
//     invalidation, other clients (and the writer itself) may read the old
//     value from their near-caches. A client that must read its own writes
//     reads without the cache (Do instead of DoCache).
//   - Invalidations travel on each connection; their delay is the
//     network's and the client's. A replica's connection invalidates when
//     the write reaches the replica.
//
// # Memory
//
// Options bound the near-cache by entries (keys), bytes, or both. A bound
// in bytes is the cache's bound in weight: each entry weighs its slot in
// the cache's table, its key, and each of its replies (the reply's
// struct, its command, and the message's size as the client's CacheSize
// reports it), and the entries never weigh more than MaxBytes; a reply
// larger than the whole bound is not cached. The table grows as entries
// arrive, so an idle near-cache holds little; Stats reports what the
// entries weigh.
//
// docs/near-cache.md in the repository says when to use the tier and how
// it compares with rueidis's own near-cache (cmd/tierbench measures it).
package tier
