package hitratio

import (
	"container/list"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/workload"
	"github.com/twochoice/twochoice/internal/testutil"
)

func peer(t *testing.T, name string) caches.Peer[uint64, struct{}] {
	t.Helper()
	p, err := caches.Lookup[uint64, struct{}](name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func replayKeys(t *testing.T, name string, capacity int, keys []uint64) Result {
	t.Helper()
	c, err := peer(t, name).New(caches.Options{Capacity: capacity, Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := Replay(c, workload.Replay("keys", workload.Reads(keys)), 0)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Worked by hand: LRU of 2 entries.
//
//	1 miss [1]   2 miss [2 1]   1 hit [1 2]   3 miss [3 1]
//	2 miss [2 3] 1 miss [1 2]   4 miss [4 1]  1 hit [1 4]
func TestReplayKnownAnswer(t *testing.T) {
	r := replayKeys(t, "lru", 2, []uint64{1, 2, 1, 3, 2, 1, 4, 1})
	if r.Reads != 8 || r.Hits != 2 || r.Writes != 0 || r.HitRatio() != 0.25 {
		t.Fatalf("result %+v", r)
	}
}

// The same replay with a timeline of windows of 3 reads: the windows
// hold 3, 3 and 2 reads with 1, 0 and 1 hits (the hits are the third and
// the eighth read), and a replay without a window keeps none.
func TestReplayTimeline(t *testing.T) {
	p := peer(t, "lru")
	keys := []uint64{1, 2, 1, 3, 2, 1, 4, 1}
	open := func() (workload.Workload[uint64], error) { return workload.Replay("keys", workload.Reads(keys)), nil }
	r, err := RunOne(open, Job[uint64, struct{}]{Peer: p, Capacity: 2, Window: 3}, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []Window{{3, 1}, {3, 0}, {2, 1}}
	if !slices.Equal(r.Timeline, want) || r.Hits != 2 || r.Reads != 8 {
		t.Errorf("timeline %v, %d hits of %d, want %v", r.Timeline, r.Hits, r.Reads, want)
	}
	if h := r.Timeline[2].HitRatio(); h != 0.5 || (Window{}).HitRatio() != 0 {
		t.Errorf("window hit ratios %v, %v", h, (Window{}).HitRatio())
	}
	// The warm-up is replayed but is in no window.
	r, err = RunOne(open, Job[uint64, struct{}]{Peer: p, Capacity: 2, Window: 4}, 2)
	if want := []Window{{4, 1}, {2, 1}}; err != nil || !slices.Equal(r.Timeline, want) {
		t.Errorf("after a warm-up of 2: timeline %v (%v), want %v", r.Timeline, err, want)
	}
	if r := replayKeys(t, "lru", 2, keys); r.Timeline != nil {
		t.Errorf("a replay without a window has the timeline %v", r.Timeline)
	}
}

// refLRU is an LRU cache written the obvious way.
type refLRU struct {
	cap   int
	order *list.List // front = most recent
	where map[uint64]*list.Element
}

func (l *refLRU) access(k uint64) bool {
	if e, ok := l.where[k]; ok {
		l.order.MoveToFront(e)
		return true
	}
	l.where[k] = l.order.PushFront(k)
	if l.order.Len() > l.cap {
		delete(l.where, l.order.Remove(l.order.Back()).(uint64))
	}
	return false
}

// The replay of golang-lru must count exactly the hits of a reference LRU,
// on a skewed stream and at sizes from 1 entry up.
func TestReplayMatchesReferenceLRU(t *testing.T) {
	z, err := workload.NewZipf(0.8, 5000, 11)
	if err != nil {
		t.Fatal(err)
	}
	n := 200_000
	if testing.Short() {
		n = 50_000
	}
	reqs, _ := workload.Collect[uint64](z, n)
	for _, capacity := range []int{1, 10, 100, 1000} {
		ref := &refLRU{cap: capacity, order: list.New(), where: map[uint64]*list.Element{}}
		var want int64
		keys := make([]uint64, len(reqs))
		for i, q := range reqs {
			keys[i] = q.Key
			if ref.access(q.Key) {
				want++
			}
		}
		if r := replayKeys(t, "lru", capacity, keys); r.Hits != want {
			t.Errorf("capacity %d: %d hits; the reference LRU has %d", capacity, r.Hits, want)
		}
	}
}

// An unbounded cache misses exactly once per distinct key: the ceiling.
func TestUnboundedIsCeiling(t *testing.T) {
	z, _ := workload.NewZipf(1.0, 100_000, 5)
	n := 300_000
	if testing.Short() {
		n = 60_000
	}
	reqs, _ := workload.Collect[uint64](z, n)
	distinct := map[uint64]bool{}
	keys := make([]uint64, len(reqs))
	for i, q := range reqs {
		keys[i] = q.Key
		distinct[q.Key] = true
	}
	for _, name := range []string{"map", "syncmap"} {
		r := replayKeys(t, name, 0, keys)
		if r.Hits != int64(len(keys)-len(distinct)) {
			t.Errorf("%s: %d hits; want %d requests - %d distinct keys", name, r.Hits, len(keys), len(distinct))
		}
	}
	// And a bounded cache stays below it.
	if r := replayKeys(t, "lru", 1000, keys); r.Hits >= int64(len(keys)-len(distinct)) {
		t.Errorf("lru of 1000 entries: %d hits, at or above the ceiling", r.Hits)
	}
}

// Writes set keys without counting; the reads after them hit.
func TestReplayWrites(t *testing.T) {
	reqs := []workload.Request[uint64]{{Key: 1, Op: workload.Write}, {Key: 1}, {Key: 2}, {Key: 2, Op: workload.Write}, {Key: 2}}
	c, _ := caches.NewMap[uint64, struct{}](caches.Options{})
	r, err := Replay(c, workload.Replay("w", reqs), 0)
	if err != nil || r.Reads != 3 || r.Writes != 2 || r.Hits != 2 {
		t.Fatalf("result %+v, %v; want 3 reads, 2 writes, 2 hits", r, err)
	}
}

// Warm-up requests go to the cache but not into the counts; their hits
// are counted apart.
func TestReplayWarmup(t *testing.T) {
	keys := []uint64{1, 1, 2, 3, 1, 2, 3, 4}
	c, _ := caches.NewMap[uint64, struct{}](caches.Options{})
	r, err := Replay(c, workload.Replay("w", workload.Reads(keys)), 3)
	if err != nil || r.Reads != 5 || r.Hits != 3 || r.WarmupHits != 1 {
		t.Fatalf("result %+v, %v; want 5 reads, 3 hits, 1 warm-up hit", r, err)
	}
}

// Run gives every job the same stream: the same results one at a time or
// in parallel, in job order, with the job's capacity and boundedness.
func TestRunIsDeterministic(t *testing.T) {
	requests := int64(100_000)
	if testing.Short() {
		requests = 20_000
	}
	open := func() (workload.Workload[uint64], error) {
		z, err := workload.NewZipf(0.9, 20_000, 3)
		return workload.Limit[uint64](z, requests), err
	}
	var peers []caches.Peer[uint64, struct{}]
	for _, n := range []string{"lru", "arc", "2q", "map"} {
		peers = append(peers, peer(t, n))
	}
	jobs := Jobs(peers, []int{100, 1000})
	one, err := Run(open, jobs, Options{Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	var done atomic.Int32
	many, err := Run(open, jobs, Options{Parallel: 3, Done: func() { done.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	if int(done.Load()) != len(jobs) {
		t.Errorf("Done called %d times for %d jobs", done.Load(), len(jobs))
	}
	for i, j := range jobs {
		if !reflect.DeepEqual(one[i], many[i]) {
			t.Errorf("job %d: %+v alone, %+v in parallel", i, one[i], many[i])
		}
		if one[i].Cache != j.Peer.Name || one[i].Capacity != j.Capacity || one[i].Bounded != j.Peer.Bounded || one[i].Reads != requests {
			t.Errorf("job %d (%s at %d): result %+v", i, j.Peer.Name, j.Capacity, one[i])
		}
	}
}

type closeTracker struct {
	workload.Workload[uint64]
	closed *int
}

func (c closeTracker) Close() error { *c.closed++; return nil }

// A job's failure names the job and keeps its cause; the other jobs run,
// and workloads are closed.
func TestRunErrors(t *testing.T) {
	closed := 0
	open := func() (workload.Workload[uint64], error) {
		return closeTracker{workload.NewARC("bad.lis", strings.NewReader("1 1 0 0\nx\n")), &closed}, nil
	}
	good := func() (workload.Workload[uint64], error) {
		return closeTracker{workload.NewARC("good.lis", strings.NewReader("1 1 0 0\n1 1 0 0\n")), &closed}, nil
	}
	jobs := []Job[uint64, struct{}]{{Peer: peer(t, "lru"), Capacity: 10}, {Peer: peer(t, "lru"), Capacity: 0}}
	_, err := Run(open, jobs, Options{})
	if !errors.Is(err, workload.ErrSyntax) || !errors.Is(err, caches.ErrCapacity) ||
		!strings.Contains(err.Error(), "lru at capacity 10") || !strings.Contains(err.Error(), "lru at capacity 0") {
		t.Fatalf("error %v", err)
	}
	if closed != 1 {
		t.Fatalf("%d workloads closed; want the 1 opened", closed)
	}
	res, err := Run(good, jobs[:1], Options{})
	if err != nil || res[0].Hits != 1 || closed != 2 {
		t.Fatalf("good trace: %+v, %v, %d closed", res, err, closed)
	}
}

// Every bounded peer not marked Random replays exactly: the same hits on
// the same requests, in another cache of the same capacity.
func TestPeersReplayExactly(t *testing.T) {
	testutil.SkipOneGoroutine(t, "two replays of every bounded peer")
	_, keys := zipfKeys(t, 0.9, 5000, 4, 30_000)
	for _, p := range caches.Peers[uint64, struct{}]() {
		if !p.Bounded || p.Random {
			continue
		}
		a, b := replayKeys(t, p.Name, 500, keys), replayKeys(t, p.Name, 500, keys)
		if a.Hits != b.Hits {
			t.Errorf("%s: %d hits, then %d: mark it Random", p.Name, a.Hits, b.Hits)
		}
	}
}

// A job's seed reaches a seeded peer: seed 0 is the harness's fixed seed
// (1), the same seed replays exactly, and the seeds 1 to 8 do not all give
// the same hits (the seed picks the keys the policy samples and the
// candidates of every key). Only twochoice's caches are seeded.
func TestSeededPeersFollowTheirSeed(t *testing.T) {
	testutil.SkipOneGoroutine(t, "twelve replays of every seeded peer")
	_, keys := zipfKeys(t, 0.8, 20_000, 6, 60_000)
	run := func(p caches.Peer[uint64, struct{}], seed uint64) int64 {
		t.Helper()
		r, err := RunOne(func() (workload.Workload[uint64], error) { return workload.Replay("keys", workload.Reads(keys)), nil },
			Job[uint64, struct{}]{Peer: p, Capacity: 600, Seed: seed}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return r.Hits
	}
	seeded := 0
	for _, p := range caches.Peers[uint64, struct{}]() {
		if !p.Seeded {
			continue
		}
		seeded++
		if !strings.HasPrefix(p.Name, "twochoice-") || !p.Bounded || p.Random {
			t.Errorf("%s is seeded", p.Name)
		}
		if a, b := run(p, 0), run(p, 1); a != b {
			t.Errorf("%s: %d hits under seed 0, %d under seed 1", p.Name, a, b)
		}
		if a, b := run(p, 5), run(p, 5); a != b {
			t.Errorf("%s: %d hits under seed 5, then %d", p.Name, a, b)
		}
		hits := map[int64]bool{}
		for s := uint64(1); s <= 8; s++ {
			hits[run(p, s)] = true
		}
		if len(hits) < 2 {
			t.Errorf("%s: the same hits under seeds 1 to 8: the seed does not reach the cache", p.Name)
		}
	}
	if seeded == 0 {
		t.Error("no seeded peer")
	}
}

// zipfKeys returns count requests of a Zipf law of exponent s over n keys,
// drawn from seed, and their keys.
func zipfKeys(t *testing.T, s float64, n, seed uint64, count int) ([]workload.Request[uint64], []uint64) {
	t.Helper()
	z, err := workload.NewZipf(s, n, seed)
	if err != nil {
		t.Fatal(err)
	}
	reqs, _ := workload.Collect[uint64](z, count)
	keys := make([]uint64, len(reqs))
	for i, q := range reqs {
		keys[i] = q.Key
	}
	return reqs, keys
}
