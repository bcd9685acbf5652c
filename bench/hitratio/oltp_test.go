package hitratio

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/workload"
	"github.com/twochoice/twochoice/internal/testutil"
)

// tracesDir is ../shared/traces seen from the repository's root.
var tracesDir = filepath.Join("..", "..", "..", "shared", "traces")

// loadTrace reads one of the shared ARC traces into memory, once per test,
// so that parallel replays share it instead of each decoding the file; it
// skips the test when the traces are absent.
func loadTrace(t *testing.T, name string) func() (workload.Workload[uint64], error) {
	t.Helper()
	return loadTracePrefix(t, name, math.MaxInt)
}

// loadTracePrefix is loadTrace for the first n requests.
func loadTracePrefix(t *testing.T, name string, n int) func() (workload.Workload[uint64], error) {
	t.Helper()
	p := filepath.Join(tracesDir, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("trace %s not found (%v): the real-trace tests need ../shared/traces beside the repository", name, err)
	}
	f, err := workload.OpenARC(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reqs, err := workload.Collect[uint64](f, n)
	if err != nil {
		t.Fatal(err)
	}
	return func() (workload.Workload[uint64], error) { return workload.Replay(name, reqs), nil }
}

// oltpCapacities and oltpReference are the reference table of
// docs/traces.md: hit ratios in percent on OLTP, a miss inserting the
// block.
var oltpCapacities = []int{1000, 2000, 5000, 10000, 15000}

var oltpReference = map[string][]float64{
	"lru":   {32.83, 42.47, 53.65, 60.70, 64.63},
	"arc":   {39.12, 46.15, 55.12, 61.97, 65.55},
	"2q":    {39.24, 45.87, 54.98, 62.05, 65.96},
	"otter": {40.36, 46.05, 53.73, 57.98, 60.59},
}

// tolerance is how close a replay of a deterministic peer must come to its
// reference row, in percentage points: the reference's own two decimals
// and the peers' small differences in configuration fit well inside it.
const tolerance = 0.3

// otterMeasured is otter's hit ratio on OLTP as this harness measures it
// with otter's own simulator configuration (see caches.NewOtter): the
// median of 16 replays per capacity, whose standard deviation is at most
// 0.2 points (otter draws its sketch's hash seed and some admission coins
// at random).
//
// otter is held to its reference row within 0.3 points like the other
// peers, but no configuration matches it at every capacity, reliably.
// TestLongOLTPOtterVariants (-long) replays the candidates and prints, for
// each, the median and range of 5 replays; one run of it (otter v2.4.0,
// 2-core machine shared with other work, medians minus the reference):
//
//	variant                             1,000  2,000  5,000  10,000  15,000
//	harness (sync)                      -0.48  -0.14  +1.63   +1.52   +1.18
//	sync, no InitialCapacity            -0.60  +0.34  +1.69   +1.46   -1.18
//	sync, string keys                   -0.54  -0.17  +1.58   +1.47   +1.23
//	sync, no InitialCap., string keys   -0.96  +0.20  +1.72   +1.46   -1.15
//	sync, Get with a loader             -0.57  -0.14  +1.63   +1.50   +1.18
//	sync, SetIfAbsent                   -0.54  -0.13  +1.61   +1.54   +1.18
//	sync, MaximumWeight + Weigher       -0.54  -0.11  +1.61   +1.51   +1.21
//	sync, ExpiryWriting(1h)             -0.54  -0.14  +1.62   +1.49   +1.20
//	async (otter's default)             -0.12  -0.46  -1.15   +1.34   +0.90
//	async, no InitialCapacity           -0.46  -0.78  -1.53   -0.28   -0.04
//	async, string keys                  -0.20  -0.57  -0.65   +0.16   -0.14
//
// Every synchronous variant (maintenance on the caller, as otter's
// simulator runs it) is 1.2 to 1.7 points off at 5,000 entries and more,
// with a spread of 0.1 points, so none of them produced the reference.
// CleanUp after every request changes nothing either, nor does running
// maintenance only inside Set, so that reads past a full read buffer are
// dropped as they are while otter's goroutine is pending (55.3 to 55.4% at
// 5,000 entries, like the harness), and otter v2.0.0 to v2.4.0 all give
// these figures. The reference row lies inside the
// range of otter's default, asynchronous maintenance, whose hit ratio
// depends on how soon otter's goroutines get a core: on this machine one
// replay at a time spread by 1 to 2 points per capacity (at 5,000 entries
// 51.5 to 54.1%), GOMAXPROCS=1 was steadier but 1.5 to 3 points below the
// reference (50.6% at 5,000), and in each of 16 runs of 3 to 9 replays
// (async with and without InitialCapacity, string keys, a loader, CleanUp
// every 64 or 1,024 requests, the trace decoded during the replay, two
// replays at once, GOMAXPROCS=8) the medians missed the reference by 0.45
// to 1.5 points at 2,000 or at 5,000 entries. The reference is most likely
// a single asynchronous run (otter's older benchmark client left otter's
// executor at its default). Deferring maintenance by a fixed number of
// requests, to reproduce the asynchronous mode deterministically, gives hit
// ratios that jump by a point or more between neighbouring delays (at 5,000
// entries 53.98% after 32 requests, 55.10% after 48), and random delays
// (uniform, means of 16 to 128 requests) missed the reference too, so no
// delay is a fair stand-in for the scheduler.
//
// LRU, ARC and 2Q match the reference exactly, which rules out the trace
// expansion, the replay and the hit definition (every request counts, the
// first one for each block a miss). The harness therefore keeps otter's
// simulator configuration, which replays the same figures on any machine,
// and checks otter against its own measurement here.
var otterMeasured = []float64{39.81, 45.94, 55.35, 59.50, 61.80}

// otterSpread bounds otter's run-to-run variation: 5 standard deviations.
const otterSpread = 1.0

// Evidence that the harness measures the peers fairly: LRU, ARC and 2Q
// match the reference table within 0.3 points, and otter stays where its
// own configuration puts it. The -short suite checks LRU and ARC at 1,000
// entries.
func TestOLTPMatchesReference(t *testing.T) {
	if testing.Short() && testutil.Race {
		t.Skip("decoding and replaying OLTP under the race detector takes 20 s; the suite without -race checks it")
	}
	open := loadTrace(t, "OLTP.lis.zst")
	var jobs []Job[uint64, struct{}]
	for _, name := range []string{"lru", "arc", "2q", "otter"} {
		p, err := caches.Lookup[uint64, struct{}](name)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range oltpCapacities {
			// -short keeps LRU and ARC at 1,000 entries.
			if testing.Short() && (c != 1000 || name == "otter" || name == "2q") {
				continue
			}
			jobs = append(jobs, Job[uint64, struct{}]{Peer: p, Capacity: c})
		}
	}
	results, err := Run(open, jobs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		i := slices.Index(oltpCapacities, r.Capacity)
		ref := oltpReference[r.Cache][i]
		got := 100 * r.HitRatio()
		t.Logf("%-6s C=%5d  %6.2f%%  reference %6.2f%%  (%+.2f)", r.Cache, r.Capacity, got, ref, got-ref)
		if r.Reads != 914_145 || r.Writes != 0 {
			t.Errorf("%s: %d reads, %d writes; OLTP has 914,145 requests", r.Cache, r.Reads, r.Writes)
		}
		if r.Cache == "otter" {
			if want := otterMeasured[i]; math.Abs(got-want) > otterSpread {
				t.Errorf("otter at %d entries: hit ratio %.2f%%, measured before as %.2f%%: off by more than its spread (%.1f points)",
					r.Capacity, got, want, otterSpread)
			}
			continue
		}
		if math.Abs(got-ref) > tolerance {
			t.Errorf("%s at %d entries: hit ratio %.2f%%, reference %.2f%%: off by more than %.1f points",
				r.Cache, r.Capacity, got, ref, tolerance)
		}
	}
}

// TestOLTPTwochoiceBeatsPeers holds the bounded twochoice cache (go-left,
// the default rule) to the hit ratio of the best of LRU, ARC, 2Q (their
// reference figures, which this harness reproduces) and otter (as this
// harness measures it), less peerSlack, at every capacity of the OLTP
// table: the bar the corpus mode sets for every row. The store's seed is
// fixed in the adapter, so the figures are exact and replayable.
// peerSlack is how far below the best peer a row may be, in points: the
// corpus summary's "within 0.5 point" (bench/corpus).
const peerSlack = 0.5

func TestOLTPTwochoiceBeatsPeers(t *testing.T) {
	if testing.Short() && testutil.Race {
		t.Skip("decoding and replaying OLTP under the race detector takes 20 s; the suite without -race checks it")
	}
	open := loadTrace(t, "OLTP.lis.zst")
	p, err := caches.Lookup[uint64, struct{}]("twochoice-goleft")
	if err != nil {
		t.Fatal(err)
	}
	capacities := oltpCapacities
	if testing.Short() {
		capacities = capacities[:1]
	}
	results, err := Run(open, Jobs([]caches.Peer[uint64, struct{}]{p}, capacities), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		best, who := otterMeasured[i], "otter (measured)"
		for name, row := range oltpReference {
			if name != "otter" && row[i] > best {
				best, who = row[i], name
			}
		}
		got := 100 * r.HitRatio()
		t.Logf("twochoice-goleft C=%5d  %6.2f%%  best peer %s %6.2f%%  (%+.2f)", r.Capacity, got, who, best, got-best)
		if got < best-peerSlack {
			t.Errorf("twochoice-goleft at %d entries: hit ratio %.2f%%, more than %.1f point below %s's %.2f%%", r.Capacity, got, peerSlack, who, best)
		}
	}
}
