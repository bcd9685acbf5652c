package tier

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/twochoice/twochoice/store/tier/internal/redistest"
)

// The load test: two clients, each with its own connections and
// near-cache, read and write overlapping keys on several goroutines each.
// A value is its key's version: writes are INCR, so versions grow in the
// server's order.
//
// What a near-cache promises is that a read that starts after the
// invalidation of a write has arrived sees that write or a later one. A
// client cannot tell which write an invalidation comes from, so the test
// makes the arrival certain instead, with a fence: a goroutine of each
// client notes the versions of the writes that have returned, then sends
// PING on each of the client's connections. A server sends a
// connection's replies and invalidations in the order it makes them, and
// the client handles them in that order; so once every PING is answered,
// the invalidations of the noted writes have been handled (a write's
// invalidation is made when the write runs, before it returns). The
// noted versions become the client's floor: any read that starts after
// that must return a version at least its key's floor, or it is stale.
//
// In a cluster a write counts only once WAIT has seen it on a replica:
// after a failover the old master, now a replica, sends the invalidation
// of a write when the write reaches it, and a client whose map of the
// slots is not yet up to date still reads through it.

// loadClient is one of the two clients of a load test.
type loadClient struct {
	name   string
	c      rueidis.Client
	tier   *Tier
	floor  []atomic.Int64
	pushes atomic.Int64 // invalidated keys the client was told of

	reads, hits, stale, readErrs atomic.Int64
	writes, writeErrs            atomic.Int64
	fences, fenceErrs            atomic.Int64
}

// loadTest is one run of the load.
type loadTest struct {
	t       *testing.T
	keys    []string
	written []atomic.Int64 // the highest version a write returned
	wait    bool           // writes wait for a replica (cluster)
	clients []*loadClient
	seed    uint64
}

func newLoadTest(t *testing.T, addrs []string, nkeys int, wait bool) *loadTest {
	lt := &loadTest{t: t, wait: wait, written: make([]atomic.Int64, nkeys), seed: uint64(time.Now().UnixNano())}
	t.Logf("seed %d", lt.seed)
	for i := range nkeys {
		lt.keys = append(lt.keys, "load:"+strconv.Itoa(i))
	}
	for _, name := range []string{"A", "B"} {
		lc := &loadClient{name: name, floor: make([]atomic.Int64, nkeys)}
		lc.tier = newTier(t, Options{MaxEntries: 1024})
		lc.c = newClient(t, addrs, lc.tier, func(keys []rueidis.RedisMessage) {
			lc.pushes.Add(int64(max(len(keys), 1)))
		})
		lt.clients = append(lt.clients, lc)
	}
	return lt
}

// run runs the load until stop is closed: per client, readers readers,
// writers writers (each pausing pause between writes) and one fencer.
func (lt *loadTest) run(stop <-chan struct{}, readers, writers int, pause time.Duration) {
	var wg sync.WaitGroup
	for ci, lc := range lt.clients {
		for g := range readers {
			wg.Go(func() { lt.read(lc, rand.New(rand.NewPCG(lt.seed, uint64(ci*100+g))), stop) })
		}
		for g := range writers {
			wg.Go(func() { lt.write(lc, rand.New(rand.NewPCG(lt.seed, uint64(ci*100+50+g))), stop, pause) })
		}
		wg.Go(func() { lt.fence(lc, stop) })
	}
	wg.Wait()
}

func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

func (lt *loadTest) read(lc *loadClient, r *rand.Rand, stop <-chan struct{}) {
	ctx := context.Background()
	for n := 0; !stopped(stop); n++ {
		if n%64 == 0 { // leave the servers and writers some of the machine
			time.Sleep(50 * time.Microsecond)
		}
		i := r.IntN(len(lt.keys))
		floor := lc.floor[i].Load()
		res := lc.c.DoCache(ctx, lc.c.B().Get().Key(lt.keys[i]).Cache(), time.Minute)
		v, err := res.AsInt64()
		if rueidis.IsRedisNil(err) {
			v, err = 0, nil
		}
		if err != nil {
			lc.readErrs.Add(1)
			time.Sleep(time.Millisecond)
			continue
		}
		lc.reads.Add(1)
		if res.IsCacheHit() {
			lc.hits.Add(1)
		}
		if v < floor {
			if lc.stale.Add(1) <= 5 {
				lt.t.Errorf("client %s read %s = %d (hit %v) after its fence at %d", lc.name, lt.keys[i], v, res.IsCacheHit(), floor)
			}
		}
	}
}

func (lt *loadTest) write(lc *loadClient, r *rand.Rand, stop <-chan struct{}, pause time.Duration) {
	ctx := context.Background()
	for !stopped(stop) {
		i := r.IntN(len(lt.keys))
		v, err := lt.incr(ctx, lc.c, lt.keys[i])
		if err != nil {
			lc.writeErrs.Add(1)
		} else {
			lc.writes.Add(1)
			for w := lt.written[i].Load(); v > w && !lt.written[i].CompareAndSwap(w, v); w = lt.written[i].Load() {
			}
		}
		time.Sleep(time.Duration(r.Int64N(int64(2 * pause))))
	}
}

// errUnreplicated is a write that WAIT did not see on a replica.
var errUnreplicated = errors.New("the write reached no replica")

// incr increments key and returns its new version; in a cluster, only
// once a replica has it too.
func (lt *loadTest) incr(ctx context.Context, c rueidis.Client, key string) (int64, error) {
	if !lt.wait {
		return c.Do(ctx, c.B().Incr().Key(key).Build()).AsInt64()
	}
	var v int64
	err := c.Dedicated(func(d rueidis.DedicatedClient) error {
		rs := d.DoMulti(ctx, d.B().Incr().Key(key).Build(), d.B().Wait().Numreplicas(1).Timeout(1000).Build())
		var err error
		if v, err = rs[0].AsInt64(); err != nil {
			return err
		}
		if n, err := rs[1].AsInt64(); err != nil || n < 1 {
			return errors.Join(errUnreplicated, err)
		}
		return nil
	})
	return v, err
}

func (lt *loadTest) fence(lc *loadClient, stop <-chan struct{}) {
	ctx := context.Background()
	noted := make([]int64, len(lt.keys))
	for !stopped(stop) {
		for i := range noted {
			noted[i] = lt.written[i].Load()
		}
		ok := true
		for _, n := range lc.c.Nodes() {
			if err := n.Do(ctx, n.B().Ping().Build()).Error(); err != nil {
				ok = false
			}
		}
		if !ok {
			lc.fenceErrs.Add(1)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		lc.fences.Add(1)
		for i, v := range noted {
			for f := lc.floor[i].Load(); v > f && !lc.floor[i].CompareAndSwap(f, v); f = lc.floor[i].Load() {
			}
		}
	}
}

// report logs the counts and fails the test on a stale read or a load
// that did not exercise the near-cache.
func (lt *loadTest) report() {
	t := lt.t
	var stale int64
	for _, lc := range lt.clients {
		st := lc.tier.Stats()
		t.Logf("client %s: %d reads (%d near-cache hits, %d stale, %d errors), %d writes (%d errors), %d fences (%d errors), %d keys invalidated by the server; near-cache %+v",
			lc.name, lc.reads.Load(), lc.hits.Load(), lc.stale.Load(), lc.readErrs.Load(),
			lc.writes.Load(), lc.writeErrs.Load(), lc.fences.Load(), lc.fenceErrs.Load(), lc.pushes.Load(), st)
		stale += lc.stale.Load()
		if lc.hits.Load() == 0 || st.Invalidations == 0 || lc.fences.Load() < 10 || lc.writes.Load() == 0 {
			t.Errorf("client %s: the load did not exercise the near-cache", lc.name)
		}
	}
	fmt.Printf("load %s: %d stale reads\n", t.Name(), stale)
	if stale != 0 {
		t.Fatalf("%d stale reads", stale)
	}
}

// loadTime is how long each phase of the load tests runs.
func loadTime() time.Duration {
	if testing.Short() {
		return 500 * time.Millisecond
	}
	return 2 * time.Second
}

// TestLoadStandalone runs the load against one server, and kills and
// restarts the server half-way: the clients reconnect, and no reply
// cached before the kill survives it.
func TestLoadStandalone(t *testing.T) {
	// appendfsync always: a write returns once it is on disk, so the
	// restarted server has every version a client saw.
	s := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	lt := newLoadTest(t, []string{s.Addr}, 32, false)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { lt.run(stop, 3, 2, 100*time.Microsecond); close(done) }()
	time.Sleep(loadTime())
	s.Kill()
	s.Restart()
	time.Sleep(loadTime())
	close(stop)
	<-done
	lt.report()
	for _, lc := range lt.clients {
		if lc.tier.Stats().Closes == 0 {
			t.Errorf("client %s: no connection closed by the kill", lc.name)
		}
	}
}

// TestLoadCluster runs the load against a three-shard Redis Cluster with
// a replica per shard, moves the slot of a key to another shard with the
// load running, then fails a shard over to its replica.
func TestLoadCluster(t *testing.T) {
	began := time.Now()
	phase := func(what string) { t.Logf("%6.2fs %s", time.Since(began).Seconds(), what) }
	c := redistest.StartCluster(t, 3, 1)
	phase("cluster up")
	var addrs []string
	for _, n := range c.Nodes {
		addrs = append(addrs, n.Addr)
	}
	lt := newLoadTest(t, addrs, 32, true)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { lt.run(stop, 3, 2, 100*time.Microsecond); close(done) }()
	time.Sleep(loadTime())

	// Move the slots of a few keys to one shard.
	var to *redistest.Server
	for _, n := range c.Nodes {
		if c.IsMaster(n) {
			to = n
			break
		}
	}
	var slots []int
	for _, k := range lt.keys[:8] {
		if slot := c.Slot(k); c.MasterOf(slot) != to {
			slots = append(slots, slot)
		}
	}
	c.MoveSlots(to, slots...)
	phase(fmt.Sprintf("%d slots moved", len(slots)))
	time.Sleep(loadTime())

	// Fail over the shard of the next key, then back.
	master := c.MasterOf(c.Slot(lt.keys[4]))
	replica := c.ReplicaOf(master)
	c.Failover(replica)
	phase("failed over")
	time.Sleep(loadTime())
	c.Failover(master)
	phase("failed back")
	time.Sleep(loadTime())
	close(stop)
	<-done
	lt.report()
}
