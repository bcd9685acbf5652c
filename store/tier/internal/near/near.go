// Package near is the client-agnostic core of the near-cache: a bounded
// cache of server replies, shared by all the connections of a client,
// each connection seeing only the replies it read itself and dropping
// them all when the server says so or the connection is lost. The tier
// packages adapt it to rueidis and valkey-go, whose CacheStore contracts
// it implements: M is the client's message type.
//
// # Terms
//
//   - A connection is one client connection to one server, with the
//     server's tracking of the keys it read: rueidis makes one CacheStore
//     per connection (NewConn here).
//   - A flight is a read sent to the server for (key, command) whose reply
//     has not arrived; later reads of the same (key, command) on the same
//     connection wait for it instead of sending their own.
//   - A generation names what one connection may read: a number unique in
//     the cache, taken when the connection opens and again each time the
//     server invalidates all its keys or the connection closes. Entries
//     are keyed by (generation, key), so moving a connection to a new
//     generation hides all it had stored, in O(1); the cache's eviction
//     reclaims the hidden entries as it does any unused one.
//
// # Invariants
//
//   - A reply is stored only by Update, for a flight of the connection
//     that is still pending, under the connection's current generation.
//   - Update and Delete of one connection are called in the order the
//     server sent the replies and invalidations they carry (rueidis calls
//     both from the connection's read loop), so a reply stored for a key
//     is removed by any invalidation the server sent after it.
//   - Close moves the connection to a fresh generation and ends its
//     flights under its lock, so no reply read before the close is
//     visible after it, and none is stored after it.
package near

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Ops are what the near-cache needs to know of the client's message type.
type Ops[M any] struct {
	// PXAT returns the server-side expiry of a reply in Unix
	// milliseconds, or a value ≤ 0 for none (the client reads the key's
	// PTTL with it).
	PXAT func(*M) int64
	// WithPXAT returns a copy of m that reports pxat as its expiry, or m
	// if the message type cannot carry it.
	WithPXAT func(m M, pxat int64) M
}

// key is an entry's key: a server key under a connection's generation.
type key struct {
	gen uint64
	key string
}

// reply is a cached reply of one key to one command; more chains the
// key's replies to other commands on the same connection (rare: most keys
// are read by one command). Replies are immutable once stored.
type reply[M any] struct {
	cmd  string
	pxat int64 // Unix milliseconds
	msg  M
	more *reply[M]
}

// Cache is a near-cache shared by the connections of a client.
type Cache[M any] struct {
	es    *entries[key, reply[M]]
	clock *clock
	ops   Ops[M]
	gen   atomic.Uint64

	// Counted off the hit path (a hit is counted by the cache's own
	// striped counters, less the gets that found an entry it did not
	// serve).
	misses, waits, unserved, invalidations, flushes, closes, bypasses atomic.Uint64
}

// New returns a near-cache bounded by o.
func New[M any](o Options, ops Ops[M]) (*Cache[M], error) {
	n, err := capacity[key, reply[M]](o)
	if err != nil {
		return nil, err
	}
	clock := newClock()
	es, err := newEntries[key, reply[M]](n, clock)
	if err != nil {
		return nil, err
	}
	return &Cache[M]{es: es, clock: clock, ops: ops}, nil
}

// Capacity returns the bound in entries the cache enforces.
func Capacity[M any](o Options) (int, error) { return capacity[key, reply[M]](o) }

// Stats are a near-cache's counters, for all its connections.
type Stats struct {
	// Hits counts reads answered from the near-cache.
	Hits uint64 `json:"hits"`
	// Misses counts reads sent to the server.
	Misses uint64 `json:"misses"`
	// Waits counts reads that waited for the reply of an identical read
	// already sent on their connection.
	Waits uint64 `json:"waits"`
	// Bypasses counts reads on a closed connection, sent without caching.
	Bypasses uint64 `json:"bypasses"`
	// Invalidations counts keys the server invalidated.
	Invalidations uint64 `json:"invalidations"`
	// Flushes counts the server's invalidations of all of a connection's
	// keys (after FLUSHALL or FLUSHDB, or when it lost track of them).
	Flushes uint64 `json:"flushes"`
	// Closes counts connections closed, each dropping all it had cached.
	Closes uint64 `json:"closes"`
	// Evictions counts entries evicted to make room for others.
	Evictions uint64 `json:"evictions"`
	// Entries is the number of entries held, including those of closed
	// or flushed connections until the cache evicts them.
	Entries int `json:"entries"`
}

// HitRatio returns Hits / (Hits + Misses + Waits), or 0 before any read.
func (s Stats) HitRatio() float64 {
	n := s.Hits + s.Misses + s.Waits
	if n == 0 {
		return 0
	}
	return float64(s.Hits) / float64(n)
}

// Stats returns the near-cache's counters. Taken while reads run, each is
// a count at some moment during the call.
func (c *Cache[M]) Stats() Stats {
	unserved := c.unserved.Load()
	hits, ev := c.es.counts()
	return Stats{
		Hits:          hits - min(hits, unserved),
		Misses:        c.misses.Load(),
		Waits:         c.waits.Load(),
		Bypasses:      c.bypasses.Load(),
		Invalidations: c.invalidations.Load(),
		Flushes:       c.flushes.Load(),
		Closes:        c.closes.Load(),
		Evictions:     ev,
		Entries:       c.es.len(),
	}
}

// flightKey names a flight on its connection.
type flightKey struct{ key, cmd string }

// Conn is one connection's view of the near-cache: the CacheStore of
// rueidis's contract, less the message conversions.
type Conn[M any] struct {
	c   *Cache[M]
	gen atomic.Uint64 // written under mu

	mu      sync.Mutex
	flights map[flightKey]*Flight[M] // nil once closed
}

// NewConn returns the view of a new connection.
func (c *Cache[M]) NewConn() *Conn[M] {
	cn := &Conn[M]{c: c, flights: make(map[flightKey]*Flight[M])}
	cn.gen.Store(c.gen.Add(1))
	return cn
}

// Flight looks (key, cmd) up for a read at now that would cache its reply
// for ttl. It returns the cached reply, or a flight to wait for, or
// neither: then the caller sends the read and reports its reply to
// Update, or its failure to Cancel (unless the connection is closed, in
// which case the read is not cached).
func (cn *Conn[M]) Flight(k, cmd string, ttl time.Duration, now time.Time) (M, *Flight[M]) {
	nowMs := now.UnixMilli()
	cn.c.clock.saw(nowMs)
	if r, ok := cn.c.es.get(key{cn.gen.Load(), k}); ok {
		if m, ok := r.find(cmd, nowMs); ok {
			return m, nil
		}
		cn.c.unserved.Add(1)
	}
	return cn.miss(k, cmd, ttl, now)
}

// find returns the reply to cmd in the chain that starts at r, if it is
// there and has not expired at nowMs.
func (r *reply[M]) find(cmd string, nowMs int64) (M, bool) {
	for ; r != nil; r = r.more {
		if r.cmd == cmd {
			if r.pxat > nowMs {
				return r.msg, true
			}
			break
		}
	}
	var zero M
	return zero, false
}

// miss is Flight's path when the entry is absent: it joins the flight of
// (key, cmd) if there is one, and starts one otherwise.
func (cn *Conn[M]) miss(k, cmd string, ttl time.Duration, now time.Time) (M, *Flight[M]) {
	var zero M
	cn.mu.Lock()
	if cn.flights == nil {
		cn.mu.Unlock()
		cn.c.bypasses.Add(1)
		return zero, nil
	}
	fk := flightKey{k, cmd}
	if f := cn.flights[fk]; f != nil {
		cn.mu.Unlock()
		cn.c.waits.Add(1)
		return zero, f
	}
	// Update stores a reply before it ends the flight, both under mu: a
	// read that missed the entry and then found no flight looks again.
	if r, ok := cn.c.es.get(key{cn.gen.Load(), k}); ok {
		if m, ok := r.find(cmd, now.UnixMilli()); ok {
			cn.mu.Unlock()
			return m, nil
		}
		cn.c.unserved.Add(1)
	}
	cn.flights[fk] = &Flight[M]{ch: make(chan struct{}), xat: now.Add(ttl).UnixMilli()}
	cn.mu.Unlock()
	cn.c.misses.Add(1)
	return zero, nil
}

// Update stores the reply of the flight of (key, cmd), hands it to the
// reads waiting for it, and returns its expiry in Unix milliseconds: the
// server's (the key's PTTL) or the client's (the ttl of the read that
// started the flight), whichever comes first. Without a pending flight
// (a closed connection, a canceled read) it stores nothing and returns 0.
func (cn *Conn[M]) Update(k, cmd string, val M) int64 {
	fk := flightKey{k, cmd}
	cn.mu.Lock()
	f := cn.flights[fk]
	if f == nil {
		cn.mu.Unlock()
		return 0
	}
	pxat := cn.c.ops.PXAT(&val)
	if pxat <= 0 || f.xat < pxat {
		pxat = f.xat
		val = cn.c.ops.WithPXAT(val, pxat)
	}
	now := time.Now().UnixMilli()
	cn.c.clock.saw(now)
	if pxat > now {
		ek := key{cn.gen.Load(), k}
		r := reply[M]{cmd: cmd, pxat: pxat, msg: val}
		if old, ok := cn.c.es.get(ek); ok {
			cn.c.unserved.Add(1)
			r.more = old.others(cmd, now)
		}
		last := pxat
		for o := r.more; o != nil; o = o.more {
			last = max(last, o.pxat)
		}
		cn.c.es.set(ek, r, time.Duration(last-now+1)*time.Millisecond)
	}
	delete(cn.flights, fk)
	cn.mu.Unlock()
	f.val = val
	close(f.ch)
	return pxat
}

// others returns a copy of the chain that starts at r less the reply to
// cmd and the expired ones, or nil if none is left.
func (r reply[M]) others(cmd string, nowMs int64) *reply[M] {
	var head *reply[M]
	tail := &head
	for p := &r; p != nil; p = p.more {
		if p.cmd != cmd && p.pxat > nowMs {
			c := &reply[M]{cmd: p.cmd, pxat: p.pxat, msg: p.msg}
			*tail = c
			tail = &c.more
		}
	}
	return head
}

// Cancel ends the flight of (key, cmd), handing err to the reads waiting
// for it.
func (cn *Conn[M]) Cancel(k, cmd string, err error) {
	fk := flightKey{k, cmd}
	cn.mu.Lock()
	f := cn.flights[fk]
	delete(cn.flights, fk)
	cn.mu.Unlock()
	if f != nil {
		f.err = err
		close(f.ch)
	}
}

// Invalidate removes the connection's cached replies of key, as the server
// asked. Pending flights stay: their replies come after the invalidation.
func (cn *Conn[M]) Invalidate(k string) {
	cn.c.es.delete(key{cn.gen.Load(), k})
	cn.c.invalidations.Add(1)
}

// Flush removes all the connection's cached replies, as the server asked.
// Pending flights stay.
func (cn *Conn[M]) Flush() {
	cn.mu.Lock()
	cn.gen.Store(cn.c.gen.Add(1))
	cn.mu.Unlock()
	cn.c.flushes.Add(1)
}

// Close drops all the connection's cached replies and ends its flights,
// handing err to the reads waiting for them: the connection is lost, and
// with it the server's tracking of its keys. Later reads on it are not
// cached.
func (cn *Conn[M]) Close(err error) {
	cn.mu.Lock()
	fl := cn.flights
	cn.flights = nil
	cn.gen.Store(cn.c.gen.Add(1))
	cn.mu.Unlock()
	if fl == nil {
		return
	}
	cn.c.closes.Add(1)
	for _, f := range fl {
		f.err = err
		close(f.ch)
	}
}

// Flight is a read in flight: others wait for its reply.
type Flight[M any] struct {
	ch  chan struct{}
	xat int64 // the client-side expiry asked for, Unix milliseconds
	val M
	err error
}

// Wait returns the flight's reply or error, or ctx's error if ctx ends
// first.
func (f *Flight[M]) Wait(ctx context.Context) (M, error) {
	if done := ctx.Done(); done != nil {
		select {
		case <-f.ch:
		case <-done:
			var zero M
			return zero, ctx.Err()
		}
	} else {
		<-f.ch
	}
	return f.val, f.err
}
