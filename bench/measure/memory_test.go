package measure

import (
	"errors"
	"fmt"
	"io"
	"math"
	"testing"

	"github.com/twochoice/twochoice/bench/caches"
)

// slabCache takes exactly 512 bytes per entry of capacity, up front.
type slabCache struct {
	slab []uint64
	n    int
}

func (c *slabCache) Name() string             { return "slab" }
func (c *slabCache) Get(uint64) (Value, bool) { return 0, false }
func (c *slabCache) Set(uint64, Value)        {}
func (c *slabCache) Len() int                 { return c.n }
func (c *slabCache) Close()                   {}
func newSlab(o caches.Options) (caches.Cache[uint64, Value], error) {
	return &slabCache{slab: make([]uint64, 64*o.Capacity), n: o.Capacity}, nil
}

// A cache of known size measures as that size: neither the keys (made
// before, live throughout) nor the garbage of the fill count.
func TestMemoryKnownAnswer(t *testing.T) {
	for _, bounded := range []bool{true, false} {
		p := caches.Peer[uint64, Value]{Name: "slab", Bounded: bounded, New: newSlab}
		keys := make([]uint64, 200_000)
		m, c, err := Memory(p, 100_000, keys)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		if math.Abs(m.BytesPerEntry()-512) > 512*0.01 {
			t.Errorf("bounded %v: %.1f bytes per entry (%+v), want 512", bounded, m.BytesPerEntry(), m)
		}
		if want := map[bool]int{true: 200_000, false: 100_000}[bounded]; m.Inserted != want || m.Entries != 100_000 {
			t.Errorf("bounded %v: %+v", bounded, m)
		}
	}
}

// A cache that allocates nothing measures as 0 bytes, even right after
// code that left buffers in a sync.Pool (fmt's): one collection before
// the baseline would count them there and not after, a negative size.
func TestMemoryOfNothing(t *testing.T) {
	p := caches.Peer[uint64, Value]{Name: "nothing", New: func(o caches.Options) (caches.Cache[uint64, Value], error) {
		return &slabCache{n: o.Capacity}, nil
	}}
	keys := make([]uint64, 8)
	for range 3 {
		fmt.Fprintf(io.Discard, "%d %s %v", 12345, "pooled", 1.5)
		m, _, err := Memory(p, 8, keys)
		if err != nil {
			t.Fatal(err)
		}
		if m.Bytes < 0 {
			t.Fatalf("%d bytes for a cache that allocates nothing", m.Bytes)
		}
	}
}

// Real caches hold what they were given, and a Go map of uint64 pairs
// takes between its 16 bytes of payload and a few times that.
func TestMemoryPeers(t *testing.T) {
	keys := make([]uint64, 20_000)
	for i := range keys {
		keys[i] = uint64(i)
	}
	for _, name := range []string{"map", "lru", caches.MapName} {
		p, err := caches.Lookup[uint64, Value](name)
		if err != nil {
			t.Fatal(err)
		}
		m, c, err := Memory(p, 10_000, keys)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		if m.Entries != 10_000 || m.BytesPerEntry() < 16 || m.BytesPerEntry() > 200 {
			t.Errorf("%s: %+v, %.1f bytes per entry", name, m, m.BytesPerEntry())
		}
	}
	p, _ := caches.Lookup[uint64, Value]("lru")
	if _, _, err := Memory(p, 10_001, keys); !errors.Is(err, ErrConfig) {
		t.Errorf("too few keys: %v", err)
	}
	if _, _, err := Memory(p, 0, keys); !errors.Is(err, ErrConfig) {
		t.Errorf("capacity 0: %v", err)
	}
}
