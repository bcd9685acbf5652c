package near

import "time"

// Message is what Store needs of a client's message type M: reading a
// key out of an invalidation.
type Message[M any] interface {
	*M
	ToString() (string, error)
}

// Store is one connection's CacheStore of rueidis's contract, for a
// client whose messages are of type M and whose CacheEntry interface is
// E. valkey-go is a fork of rueidis with the same contract under its own
// type names, so one Store serves both: each tier package instantiates it
// with its client's types, and its Tier hands out Stores.
type Store[M any, P Message[M], E any] struct {
	c *Conn[M]
	// entry converts a flight to the client's CacheEntry: the identity
	// conversion, which only the client's package can write.
	entry func(*Flight[M]) E
}

// NewStore returns the CacheStore of connection c, which hands out its
// flights as entry converts them.
func NewStore[M any, P Message[M], E any](c *Conn[M], entry func(*Flight[M]) E) *Store[M, P, E] {
	return &Store[M, P, E]{c: c, entry: entry}
}

// Flight implements CacheStore: a hit returns the reply and no entry, a
// read to wait for returns the empty reply and its entry, and a read to
// send returns neither (a nil entry, not a nil flight in an interface).
func (s *Store[M, P, E]) Flight(key, cmd string, ttl time.Duration, now time.Time) (M, E) {
	v, f := s.c.Flight(key, cmd, ttl, now)
	if f == nil {
		var none E
		return v, none
	}
	return v, s.entry(f)
}

// Update implements CacheStore.
func (s *Store[M, P, E]) Update(key, cmd string, val M) int64 { return s.c.Update(key, cmd, val) }

// Cancel implements CacheStore.
func (s *Store[M, P, E]) Cancel(key, cmd string, err error) { s.c.Cancel(key, cmd, err) }

// Delete implements CacheStore: nil keys invalidate all the connection's
// keys; a key that is not a string does too, rather than leave a stale
// reply behind.
func (s *Store[M, P, E]) Delete(keys []M) {
	if keys == nil {
		s.c.Flush()
		return
	}
	for i := range keys {
		k, err := P(&keys[i]).ToString()
		if err != nil {
			s.c.Flush()
			return
		}
		s.c.Invalidate(k)
	}
}

// Close implements CacheStore.
func (s *Store[M, P, E]) Close(err error) { s.c.Close(err) }
