package hitratio

import (
	"container/list"
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/workload"
)

// long opts in to the replays that take minutes: every peer on the whole of
// P12, and on Zipf workloads over a million keys.
var long = flag.Bool("long", false, "run the long hit-ratio measurements (P12, Zipf over 1M keys)")

// allPeers returns the bounded peers and the map, the ceiling. syncmap
// would give the same ceiling again.
func allPeers() []caches.Peer[uint64, struct{}] {
	var ps []caches.Peer[uint64, struct{}]
	for _, p := range caches.Peers[uint64, struct{}]() {
		if p.Bounded || p.Name == "map" {
			ps = append(ps, p)
		}
	}
	return ps
}

// checkResults applies what must hold of any replay: no bounded cache beats
// the unbounded one, whose misses are the compulsory ones, and LRU, a stack
// algorithm, never loses hits when it grows. It returns a table of hit
// ratios, caches down, capacities across.
func checkResults(t *testing.T, results []Result, capacities []int) string {
	t.Helper()
	ceiling := map[int]int64{}
	for _, r := range results {
		if !r.Bounded {
			ceiling[r.Capacity] = r.Hits
		}
	}
	lastLRU := int64(-1)
	for _, r := range results {
		if c, ok := ceiling[r.Capacity]; ok && r.Bounded && r.Hits > c {
			t.Errorf("%s at %d: %d hits, more than an unbounded cache's %d", r.Cache, r.Capacity, r.Hits, c)
		}
		if r.Cache == "lru" {
			if r.Hits < lastLRU {
				t.Errorf("lru at %d: %d hits, fewer than at a smaller capacity (%d)", r.Capacity, r.Hits, lastLRU)
			}
			lastLRU = r.Hits
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-15s", "cache")
	for _, c := range capacities {
		fmt.Fprintf(&b, " %9d", c)
	}
	for i, r := range results {
		if i%len(capacities) == 0 {
			name := r.Cache
			if !r.Bounded {
				name += " (ceiling)"
			}
			fmt.Fprintf(&b, "\n%-15s", name)
		}
		fmt.Fprintf(&b, " %8.2f%%", 100*r.HitRatio())
	}
	return b.String()
}

// The normal suite replays the first 500,000 requests of P12: golang-lru
// must count exactly the hits of the reference LRU on real data, and the
// general checks must hold.
func TestP12Prefix(t *testing.T) {
	if testing.Short() {
		t.Skip("half a million requests per replay; skipped in -short mode")
	}
	const prefix = 500_000
	open := loadTracePrefix(t, "P12.lis.zst", prefix)
	capacities := []int{1000, 50_000}
	var peers []caches.Peer[uint64, struct{}]
	for _, n := range []string{"lru", "arc", "2q", "map"} {
		peers = append(peers, peer(t, n))
	}
	results, err := Run(open, Jobs(peers, capacities), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("P12, first %d requests:\n%s", prefix, checkResults(t, results, capacities))

	w, _ := open()
	reqs, _ := workload.Collect(w, prefix)
	ref := &refLRU{cap: 50_000, order: list.New(), where: map[uint64]*list.Element{}}
	var want int64
	for _, q := range reqs {
		if ref.access(q.Key) {
			want++
		}
	}
	if got := results[1]; got.Cache != "lru" || got.Capacity != 50_000 || got.Hits != want {
		t.Errorf("%s at %d entries on the P12 prefix: %d hits; the reference LRU at 50,000 has %d", got.Cache, got.Capacity, got.Hits, want)
	}
}

// Every peer on all of P12, at capacities from 1,000 entries (0.03% of
// its 3.15 million blocks) to 500,000 (16%).
func TestLongP12(t *testing.T) {
	if !*long {
		t.Skip("every peer on 13.2 million requests takes minutes; run with -long")
	}
	open := loadTrace(t, "P12.lis.zst")
	capacities := []int{1000, 10_000, 100_000, 500_000}
	results, err := Run(open, Jobs(allPeers(), capacities), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("P12 (13,208,930 requests), hit ratio:\n%s", checkResults(t, results, capacities))
}

// Every peer on Zipf workloads over a million keys, caches at 1% and 10% of
// the keys (the sizes twochoice bench compares by default), against the ceiling of independent
// requests: no cache can expect more hits than the share of its capacity's
// most popular keys.
func TestLongZipf(t *testing.T) {
	if !*long {
		t.Skip("every peer on 10 million Zipf requests takes minutes; run with -long")
	}
	const keys, requests, seed = 1_000_000, 10_000_000, 1
	capacities := []int{keys / 100, keys / 10}
	for _, s := range []float64{0.9, 1.1} {
		open := func() (workload.Workload[uint64], error) {
			z, err := workload.NewZipf(s, keys, seed)
			return workload.Limit[uint64](z, requests), err
		}
		results, err := Run(open, Jobs(allPeers(), capacities), Options{})
		if err != nil {
			t.Fatal(err)
		}
		var bound strings.Builder
		for _, c := range capacities {
			top := workload.ZipfTopShare(s, keys, uint64(c))
			fmt.Fprintf(&bound, " %8.2f%%", 100*top)
			sigma := math.Sqrt(top * (1 - top) / requests)
			for _, r := range results {
				if r.Bounded && r.Capacity == c && r.HitRatio() > top+5*sigma {
					t.Errorf("s=%v: %s at %d: hit ratio %.4f above the top-%d share %.4f", s, r.Cache, c, r.HitRatio(), c, top)
				}
			}
		}
		t.Logf("Zipf s=%v over %d keys, %d requests, seed %d, hit ratio:\n%s\n%-15s%s", s, keys, requests, seed,
			checkResults(t, results, capacities), "top-C", bound.String())
	}
}
