package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// byteLen weighs a []byte value by its length.
func byteLen(_ string, v []byte) uint32 { return uint32(len(v)) }

// weightLedger is a reference for a cache bounded by weight: it adds the
// weight of every value a test stores and takes off the weight of every
// entry the deletion listener reports, so that at idle it must equal the
// cache's Weight, and its counts Len.
type weightLedger struct {
	mu            sync.Mutex
	stored, gone  int64 // weights
	sets, removed int64 // entries
	byCause       map[DeletionCause]int64
}

func (l *weightLedger) set(v []byte) {
	l.mu.Lock()
	l.stored += int64(len(v))
	l.sets++
	l.mu.Unlock()
}

func (l *weightLedger) onDeletion(ev DeletionEvent[string, []byte]) {
	l.mu.Lock()
	l.gone += int64(len(ev.Value))
	l.removed++
	if l.byCause == nil {
		l.byCause = map[DeletionCause]int64{}
	}
	l.byCause[ev.Cause]++
	l.mu.Unlock()
}

// check compares the ledger with the cache at idle.
func (l *weightLedger) check(t *testing.T, c *Cache[string, []byte]) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if got, want := int64(c.Weight()), l.stored-l.gone; got != want {
		t.Errorf("Weight = %d; the values stored weigh %d, those reported gone %d: want %d", got, l.stored, l.gone, want)
	}
	if got, want := int64(c.Len()), l.sets-l.removed; got != want {
		t.Errorf("Len = %d; Sets %d less deletion events %d = %d", got, l.sets, l.removed, want)
	}
	if w := c.Weight(); w > c.Options().MaxWeight {
		t.Errorf("Weight %d over MaxWeight %d", w, c.Options().MaxWeight)
	}
}

// TestWeightChurn stores values of random sizes from several goroutines
// into a cache whose byte bound is far below what they add up to, while
// another goroutine watches Weight: it never passes MaxWeight, and at
// idle the weights and entries match what the deletion listener reported.
func TestWeightChurn(t *testing.T) {
	seed := seedFor(t)
	const maxW = 64 << 10
	var l weightLedger
	c := newTestCache(t, CacheOptions[string, []byte]{MaxEntries: 4096, MaxWeight: maxW, Weigher: byteLen,
		OnDeletion: l.onDeletion, Seed: seed})
	const workers, ops = 4, 20_000
	stop := make(chan struct{})
	var over atomic.Uint64
	watch := make(chan struct{})
	go func() {
		defer close(watch)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if w := c.Weight(); w > maxW {
				over.Store(w)
			}
		}
	}()
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(g)))
			for range ops {
				k := fmt.Sprintf("k%d", r.IntN(3000))
				switch x := r.IntN(10); {
				case x == 0:
					c.Delete(k)
				case x == 1:
					v := make([]byte, r.IntN(200))
					if _, loaded := c.GetOrSet(k, v); !loaded {
						l.set(v)
					}
				case x == 2:
					c.Compute(k, func(old []byte, found bool) ([]byte, ComputeOp) {
						if !found {
							return nil, ComputeKeep
						}
						// Grow the value: the Compute may need room.
						return make([]byte, len(old)+r.IntN(100)), ComputeSet
					})
				default:
					v := make([]byte, r.IntN(400))
					c.Set(k, v)
					l.set(v)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-watch
	if w := over.Load(); w != 0 {
		t.Errorf("Weight reached %d during the churn, over MaxWeight %d", w, maxW)
	}
	// A Compute's stored value is counted here after the fact: its
	// deletion events are in the ledger already, its Sets are not (the
	// test cannot see them from inside fn without racing the retry), so
	// the ledger's Sets and weights are rebuilt from Stats and the table.
	var live int64
	for _, v := range c.All() {
		live += int64(len(v))
	}
	if got := int64(c.Weight()); got != live {
		t.Errorf("Weight = %d, the entries weigh %d", got, live)
	}
	st := c.Stats()
	if st.Evictions == 0 {
		t.Errorf("no evictions: the churn never pressed the weight bound (%+v)", st)
	}
	t.Logf("seed %d: %d entries weighing %d (bound %d), %d evictions, events by cause %v", seed, c.Len(), c.Weight(), maxW, st.Evictions, l.byCause)
}

// TestWeightLedger: without Compute, the weight and the entries follow
// exactly from the Sets and the deletion events.
func TestWeightLedger(t *testing.T) {
	seed := seedFor(t)
	var l weightLedger
	c := newTestCache(t, CacheOptions[string, []byte]{MaxEntries: 2048, MaxWeight: 32 << 10, Weigher: byteLen,
		OnDeletion: l.onDeletion, Seed: seed})
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(g)+10))
			for range 20_000 {
				k := fmt.Sprintf("k%d", r.IntN(2000))
				if r.IntN(8) == 0 {
					c.Delete(k)
					continue
				}
				v := make([]byte, r.IntN(300))
				c.Set(k, v)
				l.set(v)
			}
		}()
	}
	wg.Wait()
	l.check(t, c)
	t.Logf("seed %d: %d entries, weight %d, events %v", seed, c.Len(), c.Weight(), l.byCause)
}

// TestWeightTooHeavy: a value heavier than the bound is not stored, the
// key's older value goes, and both are reported.
func TestWeightTooHeavy(t *testing.T) {
	var l weightLedger
	c := newTestCache(t, CacheOptions[string, []byte]{MaxEntries: 100, MaxWeight: 1000, Weigher: byteLen,
		OnDeletion: l.onDeletion, Seed: 1})
	c.Set("a", make([]byte, 10))
	l.set(make([]byte, 10))
	c.Set("a", make([]byte, 1001))
	l.set(make([]byte, 1001))
	if _, ok := c.Get("a"); ok {
		t.Error("a value heavier than MaxWeight was stored")
	}
	if c.Weight() != 0 || c.Len() != 0 {
		t.Errorf("Weight %d, Len %d; want 0, 0", c.Weight(), c.Len())
	}
	if l.byCause[DeletionReplaced] != 1 || l.byCause[DeletionEvicted] != 1 {
		t.Errorf("events %v; want the old value replaced and the new one evicted", l.byCause)
	}
	if st := c.Stats(); st.Evictions != 1 || st.Sets != 2 {
		t.Errorf("Stats: %d Sets, %d evictions; want 2, 1", st.Sets, st.Evictions)
	}
	l.check(t, c)

	// GetOrSet returns a live entry as it is, whatever its new value weighs.
	c.Set("b", []byte("b"))
	if v, loaded := c.GetOrSet("b", make([]byte, 5000)); !loaded || string(v) != "b" {
		t.Errorf("GetOrSet(b, heavy) = %q, %v; want the live entry", v, loaded)
	}
	// Compute's too heavy value leaves the key absent.
	v, ok := c.Compute("b", func([]byte, bool) ([]byte, ComputeOp) { return make([]byte, 2000), ComputeSet })
	if ok || v != nil {
		t.Errorf("Compute(b, heavy) = %d bytes, %v; want absent", len(v), ok)
	}
	if _, ok := c.Get("b"); ok || c.Weight() != 0 {
		t.Errorf("after a too heavy Compute: b present %v, Weight %d", ok, c.Weight())
	}
	if v, ok := c.Compute("c", func([]byte, bool) ([]byte, ComputeOp) { return make([]byte, 2000), ComputeSet }); ok || v != nil {
		t.Errorf("Compute(c absent, heavy) = %d bytes, %v; want absent", len(v), ok)
	}
}

// TestWeightEvictsByPolicy: with the bound pressed by weight alone, the
// entries evicted for weight are the ones the policy ranks lowest: keys
// read all along stay, keys never read after their Set go first. Run with
// a MaxEntries near what the weight allows (a final table about half full)
// and with one 50 times that (a small table on the way, a few entries a
// bucket), where the sample must draw more buckets.
func TestWeightEvictsByPolicy(t *testing.T) {
	for _, maxE := range []int{400, 10_000} {
		t.Run(fmt.Sprint(maxE), func(t *testing.T) {
			seed := seedFor(t)
			c := newTestCache(t, CacheOptions[string, []byte]{MaxEntries: maxE, MaxWeight: 200 * 100, Weigher: byteLen, Seed: seed})
			hot := make([]string, 50)
			for i := range hot {
				hot[i] = fmt.Sprintf("hot%d", i)
				c.Set(hot[i], make([]byte, 100))
			}
			r := rand.New(rand.NewPCG(seed, 2))
			for i := range 5000 {
				c.Set(fmt.Sprintf("cold%d", i), make([]byte, 100))
				c.Get(hot[r.IntN(len(hot))])
				c.Get(hot[r.IntN(len(hot))])
			}
			kept := 0
			for _, k := range hot {
				if _, ok := c.Get(k); ok {
					kept++
				}
			}
			// 200 entries fit; cold keys pass through once each, a hot
			// key is read every 25 Sets: an LRU would keep them all.
			if kept < 45 {
				t.Errorf("seed %d: %d of %d hot keys kept; want at least 45", seed, kept, len(hot))
			}
			if c.Len() > 200 {
				t.Errorf("Len %d; 200 entries of 100 bytes fit in 20,000", c.Len())
			}
			t.Logf("seed %d: %d/%d hot keys kept, Len %d, Weight %d", seed, kept, len(hot), c.Len(), c.Weight())
		})
	}
}

// TestWeightSampleBuckets: the buckets evictSample draws are a function
// of the cache's seed and the draw's number, so the sampling replays from
// the seed; they spread evenly over the table; and another seed draws
// others.
func TestWeightSampleBuckets(t *testing.T) {
	seed := seedFor(t)
	const size, draws = 1000, 20_000
	counts := make([]int, size)
	same := 0
	for d := uint64(1); d <= draws; d++ {
		for n := range 8 {
			i := sampleBucket(seed, d, n, size)
			if i >= size {
				t.Fatalf("seed %d: draw %d, bucket %d of a table of %d", seed, d, i, size)
			}
			if j := sampleBucket(seed, d, n, size); j != i {
				t.Fatalf("seed %d: draw %d, bucket %d: %d, then %d", seed, d, n, i, j)
			}
			if sampleBucket(seed+1, d, n, size) == i {
				same++
			}
			counts[i]++
		}
	}
	// 160,000 draws over 1,000 buckets: 160 each, σ about 12.6.
	for i, c := range counts {
		if c < 160-6*13 || c > 160+6*13 {
			t.Errorf("seed %d: bucket %d drawn %d times of 160,000; want 160 ± 78", seed, i, c)
		}
	}
	// Another seed agrees on about 1 in 1,000 draws.
	if same > 400 {
		t.Errorf("seed %d: the next seed drew the same bucket %d times of 160,000", seed, same)
	}
}

// TestWeightOptions: the weight bound's options are checked.
func TestWeightOptions(t *testing.T) {
	for _, o := range []CacheOptions[string, []byte]{
		{MaxEntries: 10, MaxWeight: 100},
		{MaxEntries: 10, Weigher: byteLen},
		{MaxEntries: 10, MaxWeight: 1 << 63, Weigher: byteLen},
	} {
		if _, err := NewCache(o); !errors.Is(err, ErrOptions) {
			t.Errorf("NewCache(MaxWeight %d, Weigher %v) = %v; want ErrOptions", o.MaxWeight, o.Weigher != nil, err)
		}
	}
	c := newTestCache(t, CacheOptions[string, []byte]{MaxEntries: 10, MaxWeight: 100, Weigher: byteLen})
	if o := c.Options(); o.MaxWeight != 100 || o.Weigher == nil {
		t.Errorf("Options: MaxWeight %d, Weigher %v", o.MaxWeight, o.Weigher != nil)
	}
	if w := newTestCache(t, CacheOptions[string, []byte]{MaxEntries: 10}).Weight(); w != 0 {
		t.Errorf("Weight of a cache without a weight bound = %d", w)
	}
}

// TestWeightClearAndGrow: the total follows the entries through the
// table's growth (a cache of many entries starts small) and Clear.
func TestWeightClearAndGrow(t *testing.T) {
	var l weightLedger
	c := newTestCache(t, CacheOptions[string, []byte]{MaxEntries: 100_000, MaxWeight: 1 << 20, Weigher: byteLen,
		OnDeletion: l.onDeletion, Seed: 3})
	for i := range 50_000 {
		v := make([]byte, i%50)
		c.Set(fmt.Sprintf("k%d", i), v)
		l.set(v)
	}
	l.check(t, c)
	if err := c.checkInvariants(); err != nil {
		t.Fatal(err)
	}
	c.Clear()
	if c.Weight() != 0 || c.Len() != 0 {
		t.Errorf("after Clear: Weight %d, Len %d", c.Weight(), c.Len())
	}
	c.Set("x", make([]byte, 7))
	if c.Weight() != 7 {
		t.Errorf("Weight %d after one 7-byte Set", c.Weight())
	}
}

// TestWeightSnapshot: the weight bound and DefaultTTL survive Save and
// OpenCache; OpenCache needs the Weigher, weighs what it restores, and
// trims to a smaller bound given at open.
func TestWeightSnapshot(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	c := newTestCache(t, CacheOptions[string, []byte]{MaxEntries: 1000, MaxWeight: 10_000, Weigher: byteLen,
		DefaultTTL: time.Hour, Seed: 5})
	for i := range 500 {
		c.Set(fmt.Sprintf("k%d", i), make([]byte, 40))
	}
	want := c.Weight()
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenCache[string, []byte](path, nil); !errors.Is(err, ErrOptions) {
		t.Errorf("OpenCache without the Weigher = %v; want ErrOptions", err)
	}
	r, err := OpenCache(path, &CacheOptions[string, []byte]{Weigher: byteLen})
	if err != nil {
		t.Fatal(err)
	}
	checkAtEnd(t, r)
	if o := r.Options(); o.MaxWeight != 10_000 || o.DefaultTTL != time.Hour {
		t.Errorf("reopened: MaxWeight %d, DefaultTTL %v; want 10000, 1h", o.MaxWeight, o.DefaultTTL)
	}
	if r.Weight() != want || r.Len() != c.Len() {
		t.Errorf("reopened: Weight %d, Len %d; saved %d, %d", r.Weight(), r.Len(), want, c.Len())
	}
	small, err := OpenCache(path, &CacheOptions[string, []byte]{Weigher: byteLen, MaxWeight: 4000})
	if err != nil {
		t.Fatal(err)
	}
	checkAtEnd(t, small)
	if small.Weight() > 4000 || small.Len() > 100 {
		t.Errorf("reopened under MaxWeight 4000: Weight %d, Len %d", small.Weight(), small.Len())
	}
}

// TestWeightSetMaximum: a lower bound in entries evicts through the table
// copy, and the weights of what it evicts leave the total.
func TestWeightSetMaximum(t *testing.T) {
	var l weightLedger
	c := newTestCache(t, CacheOptions[string, []byte]{MaxEntries: 4000, MaxWeight: 1 << 20, Weigher: byteLen,
		OnDeletion: l.onDeletion, Seed: 9})
	for i := range 4000 {
		v := make([]byte, i%100)
		c.Set(fmt.Sprintf("k%d", i), v)
		l.set(v)
	}
	if err := c.SetMaximum(500); err != nil {
		t.Fatal(err)
	}
	l.check(t, c)
	if c.Len() > 500 {
		t.Errorf("Len %d after SetMaximum(500)", c.Len())
	}
	if err := c.SetMaximum(8000); err != nil {
		t.Fatal(err)
	}
	l.check(t, c)
}
