// Package near is the client-agnostic core of the near-cache: a bounded
// cache of server replies, shared by all the connections of a client,
// each connection seeing only the replies it read itself and dropping
// them all when the server says so or the connection is lost. It
// implements the CacheStore contract of rueidis and of valkey-go (a fork
// of rueidis with the same contract under its own type names) once, for
// any message type M: Store is that CacheStore, and the tier packages only
// instantiate it with their client's types.
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
//     server invalidates all its keys or the connection closes. A reply
//     is stamped with the generation of the connection that read it, and
//     only a connection of that generation is served it; so moving a
//     connection to a new generation hides all it had stored, in O(1),
//     and the cache's eviction reclaims the hidden replies as it does any
//     unused entry.
//   - An entry is a key's chain of replies: one per (generation, command)
//     that read it, usually a single one. The cache is keyed by the
//     server's key alone, so a hit hashes one string.
//
// # Invariants
//
//   - A reply is stored only by Update, for a flight of the connection
//     that is still pending, under the connection's current generation.
//   - Update and Invalidate of one connection are called in the order the
//     server sent the replies and invalidations they carry (rueidis calls
//     both from the connection's read loop), so a reply stored for a key
//     is removed by any invalidation the server sent after it.
//   - Every change of an entry (Update, Invalidate) reads the chain and
//     writes it back under the lock of the key's stripe, so no change is
//     lost to another: an invalidation never comes back in a chain that
//     another connection's Update read before it.
//   - Close moves the connection to a fresh generation and ends its
//     flights under its lock, so no reply read before the close is
//     visible after it, and none is stored after it.
package near

import (
	"context"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
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
	// Size returns the bytes a reply holds beyond its struct, for the
	// bound in bytes; nil counts assumedPayloadBytes for every reply.
	Size func(*M) int
}

// reply is a cached reply of a key to one command, read on a connection
// of generation gen; more chains the key's other replies. Replies are
// immutable once stored.
type reply[M any] struct {
	gen  uint64
	cmd  string
	pxat int64 // Unix milliseconds
	msg  M
	more *reply[M]
}

// stripes is the number of locks that serialize the changes of entries.
const stripes = 256

// stripe is one lock, alone on its cache line.
type stripe struct {
	sync.Mutex
	_ [64 - 8]byte
}

// Cache is a near-cache shared by the connections of a client.
type Cache[M any] struct {
	es    *entries[string, *reply[M]]
	clock *clock
	ops   Ops[M]
	gen   atomic.Uint64
	seed  maphash.Seed
	locks [stripes]stripe

	liveMu sync.RWMutex
	live   map[uint64]struct{} // the generations of open connections

	// Counted off the hit path (a hit is counted by the cache's own
	// striped counters, less the gets that found an entry it did not
	// serve).
	misses, waits, unserved, invalidations, flushes, closes, bypasses atomic.Uint64
}

// New returns a near-cache bounded by o.
func New[M any](o Options, ops Ops[M]) (*Cache[M], error) {
	n, err := Capacity[M](o)
	if err != nil {
		return nil, err
	}
	clock := newClock()
	es, err := newEntries[string, *reply[M]](n, maxWeight(o), weigher(ops.Size), clock)
	if err != nil {
		return nil, err
	}
	return &Cache[M]{es: es, clock: clock, ops: ops, seed: maphash.MakeSeed(), live: map[uint64]struct{}{}}, nil
}

// Capacity returns the bound in entries that o comes to.
func Capacity[M any](o Options) (int, error) {
	return capacity[string, *reply[M]](o, int64(unsafe.Sizeof(reply[M]{})))
}

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
	// Entries is the number of keys held, including replies of closed or
	// flushed connections until the cache evicts them or a change of
	// their key drops them.
	Entries int `json:"entries"`
	// Bytes is what the entries weigh against Options.MaxBytes (0 without
	// a bound in bytes).
	Bytes uint64 `json:"bytes"`
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
		Bytes:         c.es.weight(),
	}
}

// newGen returns a fresh generation and records it as live in place of
// old (0: none).
func (c *Cache[M]) newGen(old uint64, live bool) uint64 {
	g := c.gen.Add(1)
	c.liveMu.Lock()
	delete(c.live, old)
	if live {
		c.live[g] = struct{}{}
	}
	c.liveMu.Unlock()
	return g
}

// isLive reports whether generation g is an open connection's current one.
func (c *Cache[M]) isLive(g uint64) bool {
	c.liveMu.RLock()
	_, ok := c.live[g]
	c.liveMu.RUnlock()
	return ok
}

// lock locks the stripe of key k and returns it.
func (c *Cache[M]) lock(k string) *stripe {
	s := &c.locks[maphash.String(c.seed, k)%stripes]
	s.Lock()
	return s
}

// rewrite replaces the chain of key k by what edit makes of it, under the
// lock of k's stripe: edit gets the current chain (nil for none) and
// returns the new one (nil to remove the entry, the same to leave it).
func (c *Cache[M]) rewrite(k string, edit func(old *reply[M], nowMs int64) *reply[M]) {
	s := c.lock(k)
	defer s.Unlock()
	old, ok := c.es.get(k)
	if ok {
		c.unserved.Add(1)
	}
	now := time.Now().UnixMilli()
	c.clock.saw(now)
	r := edit(old, now)
	if r == old {
		return
	}
	if r == nil {
		if ok {
			c.es.delete(k)
		}
		return
	}
	last := r.pxat
	for o := r.more; o != nil; o = o.more {
		last = max(last, o.pxat)
	}
	c.es.set(k, r, time.Duration(last-now+1)*time.Millisecond)
}

// keep returns a copy of the chain at r with only the replies for which
// drop is false and that are still live: unexpired at nowMs and of an
// open connection's current generation; or nil if none is left.
func (c *Cache[M]) keep(r *reply[M], nowMs int64, drop func(*reply[M]) bool) *reply[M] {
	var head *reply[M]
	tail := &head
	for ; r != nil; r = r.more {
		if !drop(r) && r.pxat > nowMs && c.isLive(r.gen) {
			cp := *r
			cp.more = nil
			*tail = &cp
			tail = &cp.more
		}
	}
	return head
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
	cn.gen.Store(c.newGen(0, true))
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
	if r, ok := cn.c.es.get(k); ok {
		if m, ok := r.find(cn.gen.Load(), cmd, nowMs); ok {
			return m, nil
		}
		cn.c.unserved.Add(1)
	}
	return cn.miss(k, cmd, ttl, now)
}

// find returns the reply of generation gen to cmd in the chain that
// starts at r, if it is there and has not expired at nowMs.
func (r *reply[M]) find(gen uint64, cmd string, nowMs int64) (M, bool) {
	for ; r != nil; r = r.more {
		if r.gen == gen && r.cmd == cmd {
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
	if r, ok := cn.c.es.get(k); ok {
		if m, ok := r.find(cn.gen.Load(), cmd, now.UnixMilli()); ok {
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
	gen := cn.gen.Load()
	cn.c.rewrite(k, func(old *reply[M], now int64) *reply[M] {
		r := cn.c.keep(old, now, func(o *reply[M]) bool { return o.gen == gen && o.cmd == cmd })
		if pxat > now {
			r = &reply[M]{gen: gen, cmd: cmd, pxat: pxat, msg: val, more: r}
		}
		return r
	})
	delete(cn.flights, fk)
	cn.mu.Unlock()
	f.val = val
	close(f.ch)
	return pxat
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
	cn.c.invalidations.Add(1)
	if _, ok := cn.c.es.get(k); !ok { // evicted already: nothing to lock for
		return
	}
	cn.c.unserved.Add(1)
	gen := cn.gen.Load()
	cn.c.rewrite(k, func(old *reply[M], now int64) *reply[M] {
		for o := old; o != nil; o = o.more {
			if o.gen == gen {
				return cn.c.keep(old, now, func(o *reply[M]) bool { return o.gen == gen })
			}
		}
		return old // none of this connection's: nothing to remove
	})
}

// Flush removes all the connection's cached replies, as the server asked.
// Pending flights stay.
func (cn *Conn[M]) Flush() {
	cn.mu.Lock()
	cn.gen.Store(cn.c.newGen(cn.gen.Load(), true))
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
	cn.gen.Store(cn.c.newGen(cn.gen.Load(), false))
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
