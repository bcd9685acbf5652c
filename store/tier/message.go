package tier

import (
	"sync/atomic"

	"github.com/redis/rueidis"
)

// The near-cache hands out a reply with the expiry it gives it, the
// earlier of the server's (the key's PTTL) and the client's (the read's
// ttl), as rueidis's own cache does: RedisMessage.CacheTTL and CachePXAT
// report it. RedisMessage has no setter for it, so withPXAT rebuilds the
// message through CacheMarshal, whose output starts with the expiry (7
// bytes, little-endian), and CacheUnmarshalView. It checks the result and
// stops rewriting (leaving the server's expiry, or none, on the replies)
// if a rueidis release changes that layout: the near-cache keeps its own
// copy of the expiry, so its hits never depend on the message's.

// pxatBytes is the length of the expiry at the start of CacheMarshal's
// output.
const pxatBytes = 7

// pxatLayoutBroken is set once a rewrite did not read back.
var pxatLayoutBroken atomic.Bool

// serverPXAT returns the server-side expiry rueidis put on a reply, in
// Unix milliseconds, or -1 for none.
func serverPXAT(m *rueidis.RedisMessage) int64 { return m.CachePXAT() }

// withPXAT returns a copy of m that reports pxat (Unix milliseconds) as
// its expiry, or m if it cannot.
func withPXAT(m rueidis.RedisMessage, pxat int64) rueidis.RedisMessage {
	if pxatLayoutBroken.Load() || pxat <= 0 || pxat >= 1<<(8*pxatBytes) {
		return m
	}
	buf := m.CacheMarshal(nil)
	if len(buf) < pxatBytes {
		pxatLayoutBroken.Store(true)
		return m
	}
	for i := range pxatBytes {
		buf[i] = byte(pxat >> (8 * i))
	}
	var out rueidis.RedisMessage
	if err := out.CacheUnmarshalView(buf); err != nil || out.CachePXAT() != pxat {
		pxatLayoutBroken.Store(true)
		return m
	}
	return out
}
