package caches

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
)

// keyOf makes the i-th test key of type K.
func keyOf[K Key](i int) K {
	var k K
	switch p := any(&k).(type) {
	case *uint64:
		*p = uint64(i)
	case *string:
		*p = "key:" + strconv.Itoa(i)
	}
	return k
}

// The suite runs over every peer, for both key types.
func TestPeers(t *testing.T) {
	t.Run("uint64", testPeers[uint64])
	t.Run("string", testPeers[string])
}

func testPeers[K Key](t *testing.T) {
	for _, p := range Peers[K, int]() {
		t.Run(p.Name, func(t *testing.T) {
			t.Run("SetGet", func(t *testing.T) { testSetGet(t, p) })
			t.Run("Bounded", func(t *testing.T) { testBounded(t, p) })
			t.Run("Capacity", func(t *testing.T) { testCapacity(t, p) })
			t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, p) })
		})
	}
}

func newCache[K Key](t *testing.T, p Peer[K, int], o Options) Cache[K, int] {
	t.Helper()
	c, err := p.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if c.Name() != p.Name {
		t.Fatalf("cache registered as %q calls itself %q", p.Name, c.Name())
	}
	return c
}

// Below capacity no policy has a reason to drop a key: every Set must be
// seen by the next Get, overwrites included, and absent keys must miss.
//
// Except for twochoice under one choice: a key there has one candidate
// bucket of 8 slots, and a bucket fills up long before the cache does (at
// half the capacity about 2% of the buckets are full): the baseline that
// shows why two choices matter, not a policy choice.
func testSetGet[K Key](t *testing.T, p Peer[K, int]) {
	if p.Name == "twochoice-one" {
		t.Skip("one choice evicts from full buckets below capacity (see above)")
	}
	const capacity = 1000
	c := newCache(t, p, Options{Capacity: capacity, Sync: true})
	for i := range capacity / 2 {
		c.Set(keyOf[K](i), i)
		if v, ok := c.Get(keyOf[K](i)); !ok || v != i {
			t.Fatalf("Get(%v) after Set = %v, %v", keyOf[K](i), v, ok)
		}
	}
	for i := range capacity / 2 {
		if v, ok := c.Get(keyOf[K](i)); !ok || v != i {
			t.Fatalf("Get(%v) = %v, %v; want %d", keyOf[K](i), v, ok, i)
		}
	}
	c.Set(keyOf[K](7), -7)
	if v, ok := c.Get(keyOf[K](7)); !ok || v != -7 {
		t.Fatalf("Get after overwrite = %v, %v", v, ok)
	}
	if v, ok := c.Get(keyOf[K](capacity)); ok {
		t.Fatalf("Get of an absent key = %v, true", v)
	}
	if n := c.Len(); n != capacity/2 {
		t.Fatalf("Len = %d after %d distinct Sets", n, capacity/2)
	}
}

// A bounded cache never holds more than its capacity; an unbounded one
// holds everything.
func testBounded[K Key](t *testing.T, p Peer[K, int]) {
	capacity, keys := 500, 20_000
	if testing.Short() {
		capacity, keys = 200, 4_000
	}
	c := newCache(t, p, Options{Capacity: capacity, Sync: true})
	for i := range keys {
		c.Set(keyOf[K](i), i)
		if p.Bounded && i%97 == 0 {
			if n := c.Len(); n > capacity {
				t.Fatalf("Len = %d after %d Sets; capacity %d", n, i+1, capacity)
			}
		}
	}
	n := c.Len()
	switch {
	case p.Bounded && n > capacity:
		t.Fatalf("Len = %d; capacity %d", n, capacity)
	case p.Bounded && n < capacity/2:
		t.Fatalf("Len = %d of capacity %d after %d Sets: the cache does not fill up", n, capacity, keys)
	case !p.Bounded && n != keys:
		t.Fatalf("unbounded cache: Len = %d after %d distinct Sets", n, keys)
	}
	hits := 0
	for i := range keys {
		if v, ok := c.Get(keyOf[K](i)); ok {
			if v != i {
				t.Fatalf("Get(%v) = %d", keyOf[K](i), v)
			}
			hits++
		}
	}
	if p.Bounded && (hits > capacity || hits < capacity/2) {
		t.Fatalf("%d keys found in a cache of capacity %d after %d distinct Sets", hits, capacity, keys)
	}
}

func testCapacity[K Key](t *testing.T, p Peer[K, int]) {
	bad := []int{-1}
	if p.Bounded {
		bad = append(bad, 0)
	}
	for _, c := range bad {
		if _, err := p.New(Options{Capacity: c}); !errors.Is(err, ErrCapacity) {
			t.Errorf("capacity %d: error %v; want ErrCapacity", c, err)
		}
	}
}

// Concurrent Gets and Sets, checked by the race detector in CI: values must
// never belong to another key.
func testConcurrent[K Key](t *testing.T, p Peer[K, int]) {
	c := newCache(t, p, Options{Capacity: 256})
	ops := 20_000
	if testing.Short() {
		ops = 2_000
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range ops {
				i := r.IntN(1024)
				if r.IntN(4) == 0 {
					c.Set(keyOf[K](i), i)
				} else if v, ok := c.Get(keyOf[K](i)); ok && v != i {
					t.Errorf("Get(%v) = %d", keyOf[K](i), v)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestLookup(t *testing.T) {
	p, err := Lookup[uint64, int]("otter")
	if err != nil || p.Name != "otter" || !p.Bounded {
		t.Fatalf("Lookup(otter) = %+v, %v", p, err)
	}
	if _, err := Lookup[uint64, int]("memcached"); !errors.Is(err, ErrUnknown) {
		t.Fatalf("Lookup(memcached) error = %v", err)
	}
	seen := map[string]bool{}
	for _, p := range Peers[string, int]() {
		if seen[p.Name] {
			t.Fatalf("two peers named %q", p.Name)
		}
		seen[p.Name] = true
	}
}

// 2Q takes every capacity a bounded cache must: golang-lru's default split
// leaves no ghost entry at capacity 1, which New2Q refuses.
func TestTwoQSmallCapacity(t *testing.T) {
	for capacity := 1; capacity <= 4; capacity++ {
		c, err := New2Q[uint64, int](Options{Capacity: capacity})
		if err != nil {
			t.Fatalf("capacity %d: %v", capacity, err)
		}
		for i := range 10 {
			c.Set(uint64(i), i)
		}
		if n := c.Len(); n > capacity || n < 1 {
			t.Errorf("capacity %d: %d entries", capacity, n)
		}
		if v, ok := c.Get(9); !ok || v != 9 {
			t.Errorf("capacity %d: the last key set is gone", capacity)
		}
		c.Close()
	}
}
