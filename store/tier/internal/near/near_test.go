package near

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var seedFlag = flag.Uint64("near.seed", 0, "seed of the randomized tests (0: from the clock)")

func seed(t testing.TB) uint64 {
	s := *seedFlag
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -near.seed %d)", s, s)
	return s
}

// msg is a stand-in for a client's message type.
type msg struct {
	v    string
	pxat int64
}

var ops = Ops[msg]{
	PXAT: func(m *msg) int64 {
		if m.pxat == 0 {
			return -1
		}
		return m.pxat
	},
	WithPXAT: func(m msg, pxat int64) msg { m.pxat = pxat; return m },
}

func newCache(t testing.TB, o Options) *Cache[msg] {
	t.Helper()
	c, err := New(o, ops)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOptions(t *testing.T) {
	for _, o := range []Options{{MaxEntries: -1}, {MaxBytes: -1}, {MaxEntries: 10}, {MaxEntries: maxEntries + 1}} {
		if _, err := New(o, ops); !errors.Is(err, ErrOptions) {
			t.Errorf("New(%+v) returned %v, want ErrOptions", o, err)
		}
	}
	def, err := Capacity[msg](Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := Capacity[msg](Options{MaxBytes: DefaultMaxBytes}); def != want {
		t.Errorf("the zero Options hold %d entries, DefaultMaxBytes %d", def, want)
	}
	small, _ := Capacity[msg](Options{MaxBytes: 1 << 20})
	if n, _ := Capacity[msg](Options{MaxEntries: 100_000, MaxBytes: 1 << 20}); n != small {
		t.Errorf("with both bounds, capacity %d, want the tighter %d", n, small)
	}
	if n, _ := Capacity[msg](Options{MaxEntries: 100, MaxBytes: 1 << 20}); n != 100 {
		t.Errorf("with both bounds, capacity %d, want the tighter 100", n)
	}
	if n, _ := Capacity[msg](Options{MaxBytes: 1}); n != minEntries {
		t.Errorf("a tiny byte bound gives %d entries, want %d", n, minEntries)
	}
}

// model is the reference for one connection: what it has cached and
// which flights are pending.
type model struct {
	conn    *Conn[msg]
	cached  map[flightKey]string
	pending map[flightKey]*Flight[msg]
	closed  bool
}

func newModel(c *Cache[msg]) *model {
	return &model{conn: c.NewConn(), cached: map[flightKey]string{}, pending: map[flightKey]*Flight[msg]{}}
}

// TestModel drives connections with random calls and checks every Flight
// against a reference that knows what each connection cached.
func TestModel(t *testing.T) {
	r := rand.New(rand.NewPCG(seed(t), 1))
	c := newCache(t, Options{MaxEntries: 1 << 14})
	conns := []*model{newModel(c), newModel(c), newModel(c)}
	keys := []string{"a", "b", "c", "d"}
	cmds := []string{"GET", "HGET\x01f"}
	now := time.Now()
	var hits, misses, waits uint64
	for i := range 20000 {
		m := conns[r.IntN(len(conns))]
		fk := flightKey{keys[r.IntN(len(keys))], cmds[r.IntN(len(cmds))]}
		switch op := r.IntN(100); {
		case op < 50: // Flight
			v, f := m.conn.Flight(fk.key, fk.cmd, time.Hour, now)
			want, cached := m.cached[fk]
			switch {
			case m.closed:
				if v != (msg{}) || f != nil {
					t.Fatalf("op %d: Flight on a closed connection returned %v, %v", i, v, f)
				}
			case cached:
				if v.v != want || f != nil {
					evicted := c.Stats().Evictions > 0
					if !evicted || v != (msg{}) || f != nil {
						t.Fatalf("op %d: Flight(%q) = %q, %v; want the cached %q", i, fk, v.v, f, want)
					}
					delete(m.cached, fk)
					m.pending[fk] = nil
					misses++
				} else {
					hits++
				}
			case m.pending[fk] != nil || hasKey(m.pending, fk):
				if v != (msg{}) || f == nil || (m.pending[fk] != nil && f != m.pending[fk]) {
					t.Fatalf("op %d: Flight(%q) with a flight pending returned %v, %v", i, fk, v, f)
				}
				m.pending[fk] = f
				waits++
			default:
				if v != (msg{}) || f != nil {
					t.Fatalf("op %d: Flight(%q) on nothing returned %v, %v", i, fk, v, f)
				}
				m.pending[fk] = nil
				misses++
			}
		case op < 70: // Update
			val := strconv.Itoa(i)
			pxat := m.conn.Update(fk.key, fk.cmd, msg{v: val})
			f, pending := m.pending[fk]
			if !pending {
				if pxat != 0 {
					t.Fatalf("op %d: Update(%q) without a flight returned %d", i, fk, pxat)
				}
				continue
			}
			if want := now.Add(time.Hour).UnixMilli(); pxat != want {
				t.Fatalf("op %d: Update(%q) returned pxat %d, want %d", i, fk, pxat, want)
			}
			if f != nil {
				if got, err := f.Wait(context.Background()); err != nil || got.v != val {
					t.Fatalf("op %d: the waiter got %v, %v", i, got, err)
				}
			}
			delete(m.pending, fk)
			m.cached[fk] = val
		case op < 78: // Cancel
			m.conn.Cancel(fk.key, fk.cmd, errTest)
			if f := m.pending[fk]; f != nil {
				if _, err := f.Wait(context.Background()); !errors.Is(err, errTest) {
					t.Fatalf("op %d: the waiter got %v after Cancel", i, err)
				}
			}
			delete(m.pending, fk)
		case op < 92: // Invalidate
			m.conn.Invalidate(fk.key)
			for _, cmd := range cmds {
				delete(m.cached, flightKey{fk.key, cmd})
			}
		case op < 96: // Flush
			m.conn.Flush()
			clear(m.cached)
		default: // Close, then a new connection in its place
			m.conn.Close(errTest)
			for _, f := range m.pending {
				if f != nil {
					if _, err := f.Wait(context.Background()); !errors.Is(err, errTest) {
						t.Fatalf("op %d: the waiter got %v after Close", i, err)
					}
				}
			}
			clear(m.cached)
			clear(m.pending)
			m.closed = true
			if r.IntN(2) == 0 {
				*m = *newModel(c)
			}
		}
	}
	st := c.Stats()
	if st.Hits != hits || st.Misses != misses || st.Waits != waits {
		t.Errorf("Stats %+v; the reference counted %d hits, %d misses, %d waits", st, hits, misses, waits)
	}
	t.Logf("%d hits, %d misses, %d waits, %d entries, %d evictions", hits, misses, waits, st.Entries, st.Evictions)
}

func hasKey(m map[flightKey]*Flight[msg], k flightKey) bool { _, ok := m[k]; return ok }

var errTest = errors.New("test error")

// TestConcurrentInvalidation plays a server against one connection, as
// rueidis drives it: reads on many goroutines, and one read loop that
// applies writes, sends the invalidations of the keys the connection
// tracks and answers the reads in order. A read that starts after the
// read loop has handed over the invalidation of a write must see that
// write or a later one.
func TestConcurrentInvalidation(t *testing.T) {
	r := rand.New(rand.NewPCG(seed(t), 2))
	c := newCache(t, Options{MaxEntries: 1024})
	const nkeys = 16
	type request struct {
		cn *Conn[msg]
		k  int
	}
	var (
		floor [nkeys]atomic.Int64 // the version every later read must see
		conn  atomic.Pointer[Conn[msg]]
		stale atomic.Int64
		reads atomic.Int64
		reqs  = make(chan request, 64)
		stop  = make(chan struct{})
		// waitCtx ends the readers' waits when the test stops: a flight
		// whose owner stopped before sending its request is never
		// answered, and a reader waiting on it would wait forever.
		waitCtx, cancel = context.WithCancel(context.Background())
		readers         sync.WaitGroup
	)
	conn.Store(c.NewConn())
	for g := range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			rr := rand.New(rand.NewPCG(uint64(g), 3))
			for {
				select {
				case <-stop:
					return
				default:
				}
				k := rr.IntN(nkeys)
				min := floor[k].Load()
				cn := conn.Load()
				v, f := cn.Flight(strconv.Itoa(k), "GET", time.Hour, time.Now())
				if v == (msg{}) {
					if f == nil {
						select {
						case reqs <- request{cn, k}:
						case <-stop:
							return
						}
						continue
					}
					var err error
					if v, err = f.Wait(waitCtx); err != nil {
						continue
					}
				}
				reads.Add(1)
				if n, _ := strconv.ParseInt(v.v, 10, 64); n < min {
					stale.Add(1)
				}
				runtime.Gosched()
			}
		}()
	}
	// The read loop: the server's state, and its replies and pushes in
	// the order the server sends them.
	var ver [nkeys]int64
	var tracked [nkeys]bool
	var writes, flushes, drops int
	for range 50000 {
		select { // a read reaches the server: it replies and tracks the key
		case q := <-reqs:
			if q.cn == conn.Load() {
				tracked[q.k] = true
				q.cn.Update(strconv.Itoa(q.k), "GET", msg{v: strconv.FormatInt(ver[q.k], 10)})
			} else { // sent on a connection since lost
				q.cn.Cancel(strconv.Itoa(q.k), "GET", errTest)
			}
		default:
			runtime.Gosched()
		}
		switch op := r.IntN(1000); {
		case op < 300: // another client writes
			writes++
			k := r.IntN(nkeys)
			ver[k]++
			if tracked[k] {
				tracked[k] = false
				conn.Load().Invalidate(strconv.Itoa(k))
			}
			floor[k].Store(ver[k])
		case op < 303: // FLUSHALL: versions go on, every key invalidated
			flushes++
			for k := range nkeys {
				ver[k]++
				tracked[k] = false
			}
			conn.Load().Flush()
			for k := range nkeys {
				floor[k].Store(ver[k])
			}
		case op < 305: // the connection drops; the client reconnects
			drops++
			old := conn.Load()
			for k := range nkeys {
				ver[k]++ // writes it misses while away
				tracked[k] = false
			}
			old.Close(errTest)
			conn.Store(c.NewConn())
			for k := range nkeys {
				floor[k].Store(ver[k])
			}
		}
	}
	close(stop)
	cancel()
	done := make(chan struct{})
	go func() { readers.Wait(); close(done) }()
	for finished := false; !finished; {
		select { // fail the reads still in flight, so their waiters return
		case q := <-reqs:
			q.cn.Cancel(strconv.Itoa(q.k), "GET", errTest)
		case <-done:
			finished = true
		}
	}
	st := c.Stats()
	t.Logf("%d reads (%d stale), %d writes, %d flushes, %d reconnections; %+v",
		reads.Load(), stale.Load(), writes, flushes, drops, st)
	if stale.Load() != 0 {
		t.Fatalf("%d stale reads", stale.Load())
	}
	if st.Hits == 0 || st.Invalidations == 0 || st.Closes == 0 {
		t.Fatalf("the test did not exercise the cache: %+v", st)
	}
}

func TestHitAllocs(t *testing.T) {
	c := newCache(t, Options{MaxEntries: 1024})
	cn := c.NewConn()
	now := time.Now()
	cn.Flight("k", "GET", time.Hour, now)
	cn.Update("k", "GET", msg{v: "v"})
	if n := testing.AllocsPerRun(100, func() {
		if v, _ := cn.Flight("k", "GET", time.Hour, now); v.v != "v" {
			panic("miss")
		}
	}); n != 0 {
		t.Errorf("a hit allocates %v times", n)
	}
}

func BenchmarkHit(b *testing.B) {
	for _, n := range []int{1 << 10, 1 << 16} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			c := newCache(b, Options{MaxEntries: 2 * n})
			cn := c.NewConn()
			now := time.Now()
			keys := make([]string, n)
			for i := range keys {
				keys[i] = "key:" + strconv.Itoa(i)
				cn.Flight(keys[i], "GET", time.Hour, now)
				cn.Update(keys[i], "GET", msg{v: "v"})
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					cn.Flight(keys[i&(n-1)], "GET", time.Hour, now)
					i++
				}
			})
		})
	}
}
