package hitratio

import (
	"errors"
	"fmt"
	"math"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/workload"
)

// Belady's optimum is replayed as a cache that knows the request sequence
// in advance: a Sequence holds the requests and, for each, where its key
// is requested next; BeladyPeer makes a peer whose caches follow that
// sequence call by call. Each resident key is identified by the position
// of its next request, and the residents' next uses are kept in a max-heap
// (the farthest on top), with a bit per position that says a resident's
// next use is there:
//
//   - request i is a hit exactly when bit i is set; the resident's next
//     use becomes next[i], pushed onto the heap, and its old heap entry
//     (i, now in the past) is stale and is dropped when the heap is
//     compacted, once it holds twice the capacity;
//   - on a miss with the cache full, the top of the heap is the resident
//     used farthest in the future, which is evicted.
//
// Stale entries are below every live one (their positions are past), so
// the top is always live. A request costs O(log C), and the cache holds
// the heap (C to 2C positions of 4 bytes) and the bits (one per request);
// the sequence's next uses (4 bytes per request) are shared by every
// cache of the peer.

// BeladyName is the name of Belady's optimum (forced insertion, the
// variant of the figures the harness reports) in results and tables;
// BeladyBypassName that of the variant with bypass.
const (
	BeladyName       = "belady"
	BeladyBypassName = "belady-bypass"
)

// Variant is a variant of Belady's optimum.
type Variant uint8

const (
	// Forced caches every missed key: when the cache is full, the
	// resident used farthest in the future (or never again) is evicted
	// for it. It is the optimum of the caches that keep every key they
	// are asked to set, the demand paging of Belady's paper (1966):
	// twochoice, LRU, ARC and 2Q are such caches.
	Forced Variant = iota
	// Bypass may leave the missed key out instead, when its own next use
	// is at least as far as every resident's. It is the optimum of any
	// cache, those with an admission policy that may refuse a key
	// (ristretto, and otter when its window is empty) included, and is
	// at least Forced's hit ratio.
	Bypass
)

// String returns the variant's name in results: "belady" or
// "belady-bypass".
func (v Variant) String() string {
	if v == Bypass {
		return BeladyBypassName
	}
	return BeladyName
}

// never is the next use of a request whose key is not requested again.
const never = math.MaxInt32

// MaxSequence is the longest sequence Belady's optimum replays: positions
// are kept in 31 bits.
const MaxSequence = never - 1

// ErrSequence is the error of a Belady cache called out of its sequence's
// order, or of a sequence too long to replay.
var ErrSequence = errors.New("hitratio: Belady's optimum called out of its sequence")

// Sequence is a request sequence prepared for Belady's optimum. It is
// read-only once made, and shared by every cache of its peers.
type Sequence[K comparable] struct {
	reqs []workload.Request[K] // the requests, or nil and keys
	keys []K                   // read requests for these keys
	next []int32               // next[i]: position of the next request for the key of request i, or never
	// Distinct is the number of distinct keys of the sequence.
	Distinct int
}

// NewSequence prepares reqs, which the caller must not change afterwards.
// It takes one pass over them and a map of their distinct keys. A
// sequence longer than MaxSequence is an error wrapping ErrSequence.
func NewSequence[K comparable](reqs []workload.Request[K]) (*Sequence[K], error) {
	s := &Sequence[K]{reqs: reqs}
	return s, s.prepare(len(reqs), func(i int) K { return reqs[i].Key })
}

// NewReadSequence prepares a sequence of read requests for keys, which
// the caller must not change afterwards (see NewSequence).
func NewReadSequence[K comparable](keys []K) (*Sequence[K], error) {
	s := &Sequence[K]{keys: keys}
	return s, s.prepare(len(keys), func(i int) K { return keys[i] })
}

// prepare computes the next uses and the distinct keys in one backward
// pass.
func (s *Sequence[K]) prepare(n int, key func(int) K) error {
	if n > MaxSequence {
		return fmt.Errorf("%w: %d requests, at most %d", ErrSequence, n, MaxSequence)
	}
	s.next = make([]int32, n)
	last := make(map[K]int32)
	for i := n - 1; i >= 0; i-- {
		k := key(i)
		if j, ok := last[k]; ok {
			s.next[i] = j
		} else {
			s.next[i] = never
		}
		last[k] = int32(i)
	}
	s.Distinct = len(last)
	return nil
}

// Len returns the number of requests.
func (s *Sequence[K]) Len() int { return len(s.next) }

// key returns the key of request i.
func (s *Sequence[K]) key(i int) K {
	if s.reqs != nil {
		return s.reqs[i].Key
	}
	return s.keys[i]
}

// write reports whether request i is a write.
func (s *Sequence[K]) write(i int) bool { return s.reqs != nil && s.reqs[i].Op == workload.Write }

// BeladyPeer returns a bounded peer named after v whose caches are
// Belady's optimum on seq: replayed with seq's requests in order (Replay
// and Run do that), a cache of capacity C gets the most hits any cache of
// C entries of the variant's kind can get on seq. Its caches are not
// general caches: each follows seq call by call, a Get for each read and
// a Set after a missed Get or for a write, and a call out of that order
// (another key, past the end) misses, changes nothing, and is reported by
// the cache's Err method, which Run checks.
func BeladyPeer[K caches.Key, V any](seq *Sequence[K], v Variant) caches.Peer[K, V] {
	name := v.String()
	return caches.Peer[K, V]{Name: name, Bounded: true, New: func(o caches.Options) (caches.Cache[K, V], error) {
		if o.Capacity < 1 {
			return nil, fmt.Errorf("%w: %s with capacity %d", caches.ErrCapacity, name, o.Capacity)
		}
		return &beladyCache[K, V]{
			name: name, seq: seq, bypass: v == Bypass, capacity: o.Capacity,
			heap:    make([]int32, 0, min(2*o.Capacity, seq.Len())+1),
			pending: make([]uint64, seq.Len()/64+1),
		}, nil
	}}
}

// beladyCache is one replay of Belady's optimum (see the top of the file).
type beladyCache[K caches.Key, V any] struct {
	name     string
	seq      *Sequence[K]
	bypass   bool
	capacity int

	pos    int     // requests consumed
	missed bool    // the last call was a Get that missed request pos-1
	heap   []int32 // max-heap of next uses: live residents', and stale ones below pos
	live   int     // residents
	// pending has bit p set when a resident's next use is request p.
	pending []uint64
	err     error
}

func (c *beladyCache[K, V]) Name() string { return c.name }

// Len returns the residents.
func (c *beladyCache[K, V]) Len() int { return c.live }

// Close does nothing: the cache has no goroutine.
func (c *beladyCache[K, V]) Close() {}

// Err returns the first call out of the sequence's order, or nil.
func (c *beladyCache[K, V]) Err() error { return c.err }

// Get is request pos, a read of key: a hit when a resident's next use is
// pos.
func (c *beladyCache[K, V]) Get(key K) (V, bool) {
	var zero V
	c.missed = false
	i := c.pos
	if !c.follows(i, key, false) {
		return zero, false
	}
	c.pos++
	if c.take(i) {
		return zero, true
	}
	c.missed = true
	return zero, false
}

// Set inserts the key of the Get that just missed, or is request pos, a
// write of key, which refreshes a resident or inserts it.
func (c *beladyCache[K, V]) Set(key K, _ V) {
	if c.missed && c.seq.key(c.pos-1) == key {
		c.missed = false
		c.insert(c.seq.next[c.pos-1])
		return
	}
	c.missed = false
	i := c.pos
	if !c.follows(i, key, true) {
		return
	}
	c.pos++
	if !c.take(i) {
		c.insert(c.seq.next[i])
	}
}

// follows reports whether a call for key (a write, or a read) is request
// i, and records the first call that is not.
func (c *beladyCache[K, V]) follows(i int, key K, write bool) bool {
	if i < c.seq.Len() && c.seq.key(i) == key && c.seq.write(i) == write {
		return true
	}
	if c.err == nil {
		op := "read"
		if write {
			op = "write"
		}
		switch {
		case i >= c.seq.Len():
			c.err = fmt.Errorf("%w: a %s of %v after its %d requests", ErrSequence, op, key, c.seq.Len())
		default:
			want := "read"
			if c.seq.write(i) {
				want = "write"
			}
			c.err = fmt.Errorf("%w: request %d is a %s of %v, not a %s of %v", ErrSequence, i, want, c.seq.key(i), op, key)
		}
	}
	return false
}

// take serves request i from the cache if a resident's next use is i:
// that resident's next use moves on to next[i]. It reports whether it did.
func (c *beladyCache[K, V]) take(i int) bool {
	w, b := i>>6, uint64(1)<<(i&63)
	if c.pending[w]&b == 0 {
		return false
	}
	c.pending[w] &^= b
	c.push(c.seq.next[i])
	return true
}

// insert caches a missed key whose next use is nu, evicting the resident
// used farthest in the future when the cache is full; with bypass the
// key itself is left out instead when its next use is as far.
func (c *beladyCache[K, V]) insert(nu int32) {
	if c.live < c.capacity {
		c.live++
		c.push(nu)
		return
	}
	top := c.heap[0]
	if c.bypass && nu >= top {
		return
	}
	if top != never {
		c.pending[top>>6] &^= 1 << (top & 63)
	}
	if nu != never {
		c.pending[nu>>6] |= 1 << (nu & 63)
	}
	c.heap[0] = nu
	c.down(0)
}

// push adds a resident's next use to the heap, compacting it first when
// it holds twice the capacity.
func (c *beladyCache[K, V]) push(nu int32) {
	if nu != never {
		c.pending[nu>>6] |= 1 << (nu & 63)
	}
	if len(c.heap) >= 2*c.capacity {
		c.compact()
	}
	c.heap = append(c.heap, nu)
	c.up(len(c.heap) - 1)
}

// compact drops the stale entries (next uses already past) and restores
// the heap order.
func (c *beladyCache[K, V]) compact() {
	pos := int32(c.pos)
	h := c.heap[:0]
	for _, p := range c.heap {
		if p >= pos {
			h = append(h, p)
		}
	}
	c.heap = h
	for i := len(h)/2 - 1; i >= 0; i-- {
		c.down(i)
	}
}

func (c *beladyCache[K, V]) up(i int) {
	h := c.heap
	x := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if h[p] >= x {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}

func (c *beladyCache[K, V]) down(i int) {
	h := c.heap
	n := len(h)
	x := h[i]
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		if r := l + 1; r < n && h[r] > h[l] {
			l = r
		}
		if h[l] <= x {
			break
		}
		h[i] = h[l]
		i = l
	}
	h[i] = x
}
