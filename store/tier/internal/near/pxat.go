package near

import "sync/atomic"

// The near-cache hands out a reply with the expiry it gives it, the
// earlier of the server's (the key's PTTL) and the client's (the read's
// ttl), as the clients' own caches do: the messages' CacheTTL and
// CachePXAT report it. rueidis's and valkey-go's messages have no setter
// for it, so PXATWriter rebuilds the message through CacheMarshal, whose
// output starts with the expiry (7 bytes, little-endian), and
// CacheUnmarshalView. It checks the result and stops rewriting (leaving
// the server's expiry, or none, on the replies) if a release of the
// client changes that layout: the near-cache keeps its own copy of the
// expiry, so its hits never depend on the message's.

// Marshaler is what PXATWriter needs of a client's message type.
type Marshaler[M any] interface {
	*M
	CacheMarshal(buf []byte) []byte
	CacheUnmarshalView(buf []byte) error
	CachePXAT() int64
	CacheSize() int
}

// pxatBytes is the length of the expiry at the start of CacheMarshal's
// output.
const pxatBytes = 7

// PXATWriter sets the expiry of messages of type M.
type PXATWriter[M any, P Marshaler[M]] struct {
	broken atomic.Bool // a rewrite did not read back
}

// Ops returns the near-cache's Ops for M, writing expiries with w.
func (w *PXATWriter[M, P]) Ops() Ops[M] {
	return Ops[M]{
		PXAT:     func(m *M) int64 { return P(m).CachePXAT() },
		WithPXAT: w.WithPXAT,
		// The bytes of the message's serialized form: about what its
		// strings and arrays hold, the payload a bound in bytes weighs.
		Size: func(m *M) int { return P(m).CacheSize() },
	}
}

// Broken reports whether w has found that it cannot rewrite expiries.
func (w *PXATWriter[M, P]) Broken() bool { return w.broken.Load() }

// WithPXAT returns a copy of m that reports pxat (Unix milliseconds) as
// its expiry, or m if it cannot.
func (w *PXATWriter[M, P]) WithPXAT(m M, pxat int64) M {
	if w.broken.Load() || pxat <= 0 || pxat >= 1<<(8*pxatBytes) {
		return m
	}
	buf := P(&m).CacheMarshal(nil)
	if len(buf) < pxatBytes {
		w.broken.Store(true)
		return m
	}
	for i := range pxatBytes {
		buf[i] = byte(pxat >> (8 * i))
	}
	var out M
	if err := P(&out).CacheUnmarshalView(buf); err != nil || P(&out).CachePXAT() != pxat {
		w.broken.Store(true)
		return m
	}
	return out
}
