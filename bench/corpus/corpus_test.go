package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/hitratio"
	"github.com/twochoice/twochoice/bench/measure"
	"github.com/twochoice/twochoice/bench/workload"
	"github.com/twochoice/twochoice/internal/testutil"
	"github.com/twochoice/twochoice/store"
)

// tracesDir is ../shared/traces seen from the repository's root.
var tracesDir = filepath.Join("..", "..", "..", "shared", "traces")

// writeFiles makes the files of a small corpus under dir: an ARC trace, a
// LIRS trace in a subfolder, and a file that is not a trace.
func writeFiles(t *testing.T, dir string) {
	t.Helper()
	var arc, lirs strings.Builder
	for i := range 3000 {
		// Half the requests go to 10 hot blocks, half sweep 300 others.
		k := 20 + i*7%600
		if i%2 == 0 {
			k = i % 20
		}
		arc.WriteString(strconv.Itoa(k) + " 1 0 " + strconv.Itoa(i) + "\n")
		lirs.WriteString(strconv.Itoa(i%150) + "\n") // a loop over 150 blocks
	}
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"a.lis": arc.String(), "sub/loop.trace": lirs.String(), "README.md": "not a trace\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestParse(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir)
	items, err := Parse(dir + ", zipf:0.80,trace:" + filepath.Join(dir, "sub", "loop.trace"))
	if err == nil {
		t.Fatalf("the loop reached twice: %+v", items)
	}
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("the loop reached twice: %v", err)
	}
	items, err = Parse(dir + ", zipf:0.80, aging:0.8")
	if err != nil {
		t.Fatal(err)
	}
	want := []Item{{Name: "a", Path: filepath.Join(dir, "a.lis")}, {Name: "sub/loop", Path: filepath.Join(dir, "sub", "loop.trace")}, {Name: "zipf:0.8", S: 0.8}, {Name: "aging:0.8", S: 0.8, Aging: true}}
	if !slices.Equal(items, want) {
		t.Errorf("items %+v, want %+v", items, want)
	}
	if !items[2].Zipf() || !items[2].Generated() || items[3].Zipf() || !items[3].Generated() || items[0].Generated() {
		t.Errorf("kinds of %+v", items)
	}
	if items, err := Parse("trace:" + filepath.Join(dir, "a.lis")); err != nil || len(items) != 1 || items[0].Name != "a" || items[0].Zipf() {
		t.Errorf("trace:FILE: %+v, %v", items, err)
	}
	items, err = Parse("synthetic:drift,zipf:1,synthetic:all")
	if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "two workloads named synthetic:drift") {
		t.Errorf("synthetic:drift twice: %+v, %v", items, err)
	}
	items, err = Parse("synthetic:all")
	if err != nil || len(items) != len(workload.SyntheticKinds) {
		t.Fatalf("synthetic:all: %+v, %v", items, err)
	}
	for i, it := range items {
		if k := workload.SyntheticKinds[i]; it != (Item{Name: "synthetic:" + k, Kind: k}) || !it.Generated() || it.Zipf() {
			t.Errorf("synthetic:all's item %d: %+v", i, it)
		}
	}
	empty := t.TempDir()
	for _, bad := range []string{"synthetic:", "synthetic:sideways", "synthetic:All", "zipf:0", "zipf:x", "zipf:inf", "", dir + ",", empty, "trace:" + dir, "zipf:1,zipf:1.0", "aging:0", "aging:-1", "aging:1,aging:1.0"} {
		if _, err := Parse(bad); !errors.Is(err, ErrConfig) {
			t.Errorf("Parse(%q): %v, want ErrConfig", bad, err)
		}
	}
	if _, err := Parse(filepath.Join(dir, "nope")); !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrConfig) {
		t.Errorf("a missing path: %v, want the fs error", err)
	}
}

// Summarize, worked by hand on three rows and one without a margin:
// margins -0.4, -2 and +1 (within: -0.4 and +1; ahead: +1; mean -0.4667;
// worst the -2 row); gaps closed Σ(tc − best) = -0.004 - 0.02 + 0.01 =
// -0.014 over Σ(belady − best) = 0.1 + 0.2 + 0.05 = 0.35: -0.04.
func TestSummarize(t *testing.T) {
	row := func(name string, tc, best, belady float64) Row {
		m := 100 * (tc - best)
		return Row{Workload: name, Capacity: "1%", Entries: 10, HitRatio: map[string]float64{Twochoice: tc, "lru": best, hitratio.BeladyName: belady},
			BestPeer: "lru", Best: best, Margin: &m}
	}
	rows := []Row{row("a", 0.496, 0.5, 0.6), row("b", 0.28, 0.3, 0.5), row("c", 0.71, 0.7, 0.75), {Workload: "d"}}
	s := Summarize(rows)
	if s.Rows != 3 || s.Within != 2 || s.Ahead != 1 || math.Abs(s.MeanMargin-(-1.4/3)) > 1e-9 {
		t.Errorf("summary %+v", s)
	}
	if s.Worst == nil || s.Worst.Workload != "b" || math.Abs(s.Worst.Margin+2) > 1e-9 || s.Worst.Twochoice != 0.28 || s.Worst.BestPeer != "lru" {
		t.Errorf("worst %+v", s.Worst)
	}
	if s.GapClosed == nil || math.Abs(*s.GapClosed-(-0.014/0.35)) > 1e-9 {
		t.Errorf("gap closed %v, want %v", s.GapClosed, -0.014/0.35)
	}
	if s := Summarize(nil); s.Rows != 0 || s.Worst != nil || s.GapClosed != nil {
		t.Errorf("no rows: %+v", s)
	}
}

// A replay that breaks a bound is a problem of its row: a cache that
// keeps every key set above forced Belady, any cache above bypass, and a
// cache past its capacity; ristretto may pass forced Belady (it refuses
// keys).
func TestRowChecks(t *testing.T) {
	w := &loaded{item: Item{Name: "w"}, keys: make([]uint64, 100), distinct: 50}
	peer := func(name string) caches.Peer[uint64, struct{}] {
		p, err := caches.Lookup[uint64, struct{}](name)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk := func(p caches.Peer[uint64, struct{}], hits int64, peak int) *task {
		return &task{w: w, peer: p, capacity: 10, res: hitratio.Result{Cache: p.Name, Reads: 100, Hits: hits, Peak: peak, Bounded: true}}
	}
	forced := caches.Peer[uint64, struct{}]{Name: hitratio.BeladyName}
	bypass := caches.Peer[uint64, struct{}]{Name: hitratio.BeladyBypassName}
	ts := []*task{mk(peer(TwochoicePeer), 40, 10), mk(peer("lru"), 30, 10), mk(peer("ristretto"), 42, 10), mk(forced, 41, 10), mk(bypass, 43, 10)}
	row, err := makeRow(w, measure.Capacity{Share: 0.2}, 10, ts, []string{"lru", "ristretto"})
	if err != nil {
		t.Fatal(err)
	}
	if len(row.Problems) != 0 || row.BestPeer != "ristretto" || row.Margin == nil || math.Abs(*row.Margin+2) > 1e-9 || row.Capacity != "20%" {
		t.Errorf("a sound row: %+v", row)
	}
	ts = []*task{mk(peer(TwochoicePeer), 42, 10), mk(peer("lru"), 30, 11), mk(peer("ristretto"), 44, 10), mk(forced, 41, 10), mk(bypass, 43, 10)}
	row, err = makeRow(w, measure.Capacity{Share: 0.2}, 10, ts, []string{"lru", "ristretto"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"twochoice has 42 hits, above belady's 41", "ristretto has 44 hits, above belady-bypass's 43", "lru held 11 entries"}
	for _, p := range want {
		if !slices.ContainsFunc(row.Problems, func(s string) bool { return strings.Contains(s, p) }) {
			t.Errorf("no problem %q in %q", p, row.Problems)
		}
	}
	if len(row.Problems) != len(want) {
		t.Errorf("problems %q, want %d", row.Problems, len(want))
	}

	// The bounds hold over the whole stream, warm-up included: a
	// cache ahead of belady in the counted part alone is no problem,
	// one ahead over the whole stream is.
	warm := func(tk *task, h int64) *task { tk.res.WarmupHits = h; return tk }
	ts = []*task{warm(mk(peer(TwochoicePeer), 42, 10), 5), mk(peer("lru"), 30, 10), mk(peer("ristretto"), 44, 10), warm(mk(forced, 41, 10), 9), warm(mk(bypass, 43, 10), 9)}
	if row, err = makeRow(w, measure.Capacity{Share: 0.2}, 10, ts, []string{"lru", "ristretto"}); err != nil || len(row.Problems) != 0 {
		t.Errorf("ahead in the counted part alone: problems %q, %v", row.Problems, err)
	}
	ts = []*task{warm(mk(peer(TwochoicePeer), 40, 10), 11), mk(peer("lru"), 30, 10), mk(peer("ristretto"), 42, 10), warm(mk(forced, 41, 10), 9), warm(mk(bypass, 43, 10), 1)}
	row, _ = makeRow(w, measure.Capacity{Share: 0.2}, 10, ts, []string{"lru", "ristretto"})
	want = []string{"belady has 50 hits, above belady-bypass's 44", "twochoice has 51 hits, above belady's 50"}
	for _, p := range want {
		if !slices.ContainsFunc(row.Problems, func(s string) bool { return strings.Contains(s, p) }) {
			t.Errorf("no problem %q in %q", p, row.Problems)
		}
	}
}

// checkResult applies what must hold of any corpus run: every row has
// twochoice, Belady's optimum bounds every cache, no problem was found,
// and the summary is the arithmetic of the rows.
func checkResult(t *testing.T, res *Result, workloads, capacities int) {
	t.Helper()
	if len(res.Rows) != workloads*capacities || res.Workloads != workloads || res.Caches[0] != Twochoice || len(res.Problems) != 0 {
		t.Fatalf("%d rows of %d workloads, caches %v, problems %q", len(res.Rows), res.Workloads, res.Caches, res.Problems)
	}
	var sum, closed, gap float64
	within, worst := 0, math.Inf(1)
	for _, r := range res.Rows {
		tc, ok := r.HitRatio[Twochoice]
		if !ok || r.Margin == nil {
			t.Fatalf("%s at %s: no twochoice", r.Workload, r.Capacity)
		}
		for _, c := range res.Caches {
			h, ok := r.HitRatio[c]
			if !ok {
				t.Errorf("%s at %s: no %s", r.Workload, r.Capacity, c)
			}
			// Belady's optimum bounds a stream's hits, not those of the
			// counted half of a generated one (makeRow checks those
			// with the warm-up's).
			if strings.Contains(r.Workload, ":") {
				continue
			}
			if h > r.HitRatio[hitratio.BeladyBypassName] || c != "ristretto" && h > r.Belady() {
				t.Errorf("%s at %s: %s %.4f above belady %.4f (bypass %.4f)", r.Workload, r.Capacity, c, h, r.Belady(), r.HitRatio[hitratio.BeladyBypassName])
			}
		}
		best := 0.0
		for _, p := range res.Peers {
			best = max(best, r.HitRatio[p])
		}
		if best != r.Best || r.HitRatio[r.BestPeer] != best || math.Abs(*r.Margin-100*(tc-best)) > 1e-9 {
			t.Errorf("%s at %s: best %s %v, margin %v; the peers' best is %v", r.Workload, r.Capacity, r.BestPeer, r.Best, *r.Margin, best)
		}
		sum += *r.Margin
		if *r.Margin >= -WithinPoints {
			within++
		}
		worst = min(worst, *r.Margin)
		closed += tc - best
		gap += r.Belady() - best
	}
	s := res.Summary
	if s.Rows != len(res.Rows) || s.Within != within || math.Abs(s.MeanMargin-sum/float64(len(res.Rows))) > 1e-9 ||
		s.Worst.Margin != worst || s.GapClosed == nil || math.Abs(*s.GapClosed-closed/gap) > 1e-9 {
		t.Errorf("summary %+v (worst %+v), but the rows give %d within, mean %v, worst %v, gap closed %v", s, s.Worst, within, sum/float64(len(res.Rows)), worst, closed/gap)
	}
}

// Every synthetic kind replays with no problem, and its rows have the
// sizes the kind gives them: a kind names keys beyond its n ranks (the
// loop's, scans', one-offs' and the drifting window's) but uniform draws
// do not.
func TestRunSynthetic(t *testing.T) {
	items, err := Parse("synthetic:all")
	if err != nil {
		t.Fatal(err)
	}
	// Twenty draws a rank, so that uniform draws name every rank.
	n, requests := 2000, 20_000
	if testing.Short() {
		n, requests = 500, 5000
	}
	c := Config{Items: items, Capacities: []measure.Capacity{{Share: 0.05}, {Share: 0.25}}, Keys: uint64(n), Requests: requests, Seed: 5, Rounds: 1,
		Caches: []string{Twochoice, "otter", "lru", "arc", "2q"}}
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, res, len(workload.SyntheticKinds), 2)
	checkPolicies(t, res)
	for _, r := range res.Rows {
		if r.Reads != int64(requests) {
			t.Errorf("%s at %s: %d reads counted, want %d", r.Workload, r.Capacity, r.Reads, requests)
		}
		switch r.Workload {
		case "synthetic:uniform":
			if r.DistinctKeys != n {
				t.Errorf("uniform: %d keys, want %d", r.DistinctKeys, n)
			}
		case "synthetic:phases":
			// Three sets of n ranks, most of them drawn.
			if r.DistinctKeys <= 2*n || r.DistinctKeys > 3*n {
				t.Errorf("phases: %d keys, want 2n to 3n for n = %d", r.DistinctKeys, n)
			}
		default:
			if r.DistinctKeys <= n {
				t.Errorf("%s: %d keys, want more than the %d ranks", r.Workload, r.DistinctKeys, n)
			}
		}
	}
}

// A small corpus of a folder and a Zipf stream: the rows, the checks,
// and every output.
func TestRunSmall(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir)
	items, err := Parse(dir + ",zipf:0.9,aging:0.9")
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Items: items, Capacities: []measure.Capacity{{Share: 0.05}, {Share: 0.25}}, Keys: 2000, Requests: 20_000, Seed: 3, Rounds: 3}
	var calls int
	var last float64
	c.Progress = func(f float64, _ string) { calls++; last = f }
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, res, 4, 2)
	if calls == 0 || last != 1 {
		t.Errorf("progress: %d calls, last %v", calls, last)
	}
	// At each of the 8 rows: 4 caches that replay exactly, otter and
	// ristretto 3 times each, and the two optima.
	if res.Replays != 12*8 || res.Rounds != 3 || res.ZipfKeys != 2000 || res.ZipfRequests != 20_000 || !slices.Equal(res.Peers, []string{"otter", "ristretto", "lru", "arc", "2q"}) {
		t.Errorf("result %+v", res)
	}
	for _, r := range res.Rows {
		for _, c := range []string{"otter", "ristretto"} {
			if rg, ok := r.Range[c]; !ok || r.HitRatio[c] < rg[0] || r.HitRatio[c] > rg[1] {
				t.Errorf("%s at %s: %s %v, range %v", r.Workload, r.Capacity, c, r.HitRatio[c], rg)
			}
		}
		if len(r.Range) != 2 {
			t.Errorf("%s at %s: ranges %v, want otter's and ristretto's", r.Workload, r.Capacity, r.Range)
		}
		switch r.Workload {
		case "a":
			if r.DistinctKeys != 310 || r.Reads != 3000 {
				t.Errorf("row %+v", r)
			}
		case "sub/loop":
			// LRU gets nothing on a loop longer than the cache.
			if r.HitRatio["lru"] != 0 || r.DistinctKeys != 150 || r.Entries != map[string]int{"5%": 8, "25%": 38}[r.Capacity] {
				t.Errorf("row %+v", r)
			}
		case "zipf:0.9":
			if r.DistinctKeys != 2000 || r.Reads != 20_000 || r.Entries != map[string]int{"5%": 100, "25%": 500}[r.Capacity] {
				t.Errorf("row %+v", r)
			}
		case "aging:0.9":
			// 40,000 requests over 2,000 ranks, a key born every 16:
			// up to 2,000 + 2,500 keys, most of them named.
			if r.DistinctKeys <= 2000 || r.DistinctKeys > 4500 || r.Reads != 20_000 {
				t.Errorf("row %+v", r)
			}
		}
	}

	// Every row carries twochoice's policy at its end (checkPolicies); on
	// a loop longer than the cache the miniature of the ranking in use
	// hits and that of recency (LRU) does not.
	checkPolicies(t, res)
	for _, r := range res.Rows {
		if p := r.Policy; r.Workload == "sub/loop" && r.Capacity == "25%" {
			hr := map[string]float64{}
			for _, m := range p.Miniatures {
				hr[m.Ranking] = m.HitRatio
			}
			if hr[p.Ranking] < 0.2 || hr["recency"] != 0 {
				t.Errorf("loop at 25%%: %s in use; miniatures' hit ratios %v", p.Ranking, hr)
			}
		}
	}
	var b bytes.Buffer
	if err := WritePolicy(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ranking", "relocating", "sub/loop", "at Get", "→", "the bar is 4"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("policy table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteTable(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"4 workloads × 2 capacities = 8 rows", "median of 3 replays", "zipf:S is Zipf with exponent S over 2000 keys", "aging:S the same law", "sub/loop", "best peer",
		"within 0.5 point of the best peer", "mean margin", "worst row", "gap to belady closed"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteCSV(&b, res); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 9 || lines[0] != "workload,capacity,entries,distinct_keys,reads,twochoice,otter,ristretto,lru,arc,2q,belady,belady-bypass,best_peer,margin_points,problems,policy_ranking,policy_prior,policy_relocating,policy_changes" {
		t.Errorf("csv:\n%s", b.String())
	}
	if p := res.Rows[0].Policy; len(lines) > 1 && !strings.HasSuffix(lines[1], fmt.Sprintf(",%s,%s,%v,%d", p.Ranking, p.Prior, p.Relocating, p.ChangesTotal)) {
		t.Errorf("csv row %q, policy %+v", lines[1], p)
	}
	b.Reset()
	js, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(js, &back); err != nil || back.Summary.Rows != 8 || back.Rows[0].HitRatio[Twochoice] != res.Rows[0].HitRatio[Twochoice] {
		t.Errorf("json: %v\n%s", err, js)
	}
	ch := MarginChart(res)
	if len(ch.Series) != 2 || !slices.Equal(ch.XNames, []string{"a", "loop", "zipf:0.9", "aging:0.9"}) || len(ch.Series[0].X) != 4 {
		t.Errorf("chart %+v", ch)
	}
	if err := ch.SVG(&b); err != nil || !strings.Contains(b.String(), "loop") {
		t.Errorf("svg: %v", err)
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir)
	items, err := Parse(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []Config{
		{},
		{Items: items, Caches: []string{"lru", "otter"}},
		{Items: items, Caches: []string{"twochoice", "twochoice-dchoice"}},
		{Items: items, Caches: []string{"twochoice", "map"}},
		{Items: items, Caches: []string{"twochoice", "lru", "twochoice-goleft"}},
		{Items: items, Capacities: []measure.Capacity{measure.Entries(151)}}, // past the loop's 150 blocks
		{Items: []Item{{Name: "zipf:1", S: 1}}, Keys: 0, Requests: 10},
		{Items: []Item{{Name: "zipf:1", S: 1}}, Keys: 10, Requests: 0},
		{Items: items, Timeline: -1},
		{Items: items, Timeline: MaxTimeline + 1},
	} {
		if _, err := Run(ctx, c); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", c, err)
		}
	}
	if _, err := Run(ctx, Config{Items: items, Caches: []string{"twochoice", "memcached"}}); !errors.Is(err, caches.ErrUnknown) {
		t.Errorf("an unknown cache: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.lis")
	if err := os.WriteFile(bad, []byte("1 1 0 0\n2 x 0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, Config{Items: []Item{{Name: "bad", Path: bad}}}); err == nil || !strings.Contains(err.Error(), "bad.lis:2") {
		t.Errorf("a bad trace: %v", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Run(canceled, Config{Items: items}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
	defer func(m int) { maxRequests = m }(maxRequests)
	maxRequests = 1000
	if _, err := Run(ctx, Config{Items: items}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "more than 1000 requests") {
		t.Errorf("a trace past the bound: %v", err)
	}
}

// The corpus mode on the ten LIRS traces, at the four default capacities:
// every cache at or below Belady's optimum, twochoice in every row, and the
// summary the arithmetic of the rows. -short keeps the four smallest.
func TestLIRSCorpus(t *testing.T) {
	dir := filepath.Join(tracesDir, "lirs")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the LIRS traces are not at %s (%v): the real-trace tests need ../shared/traces beside the repository", dir, err)
	}
	if testutil.Race && testing.Short() {
		t.Skip("every cache on the LIRS traces is slow under the race detector; the suite without -race runs it")
	}
	list := dir
	workloads := 10
	if testing.Short() {
		var small []string
		for _, n := range []string{"cs", "gli", "ps", "cpp"} {
			small = append(small, filepath.Join(dir, n+".trace.zst"))
		}
		list, workloads = strings.Join(small, ","), 4
	}
	items, err := Parse(list)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Config{Items: items})
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, res, workloads, 4)
	checkPolicies(t, res)
	var b bytes.Buffer
	if err := WritePolicy(&b, res); err != nil {
		t.Fatal(err)
	}
	if w := res.Rows[len(res.Rows)-1].Workload; !strings.Contains(b.String(), w) {
		t.Errorf("policy table lacks %s:\n%s", w, b.String())
	}
	b.Reset()
	if err := WriteTable(&b, res); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", b.String())
}

// checkPolicies checks twochoice's policy at the end of every row of res:
// there, its changes all listed (a few per row at most) and dated within
// the row's requests.
func checkPolicies(t *testing.T, res *Result) {
	t.Helper()
	for _, r := range res.Rows {
		p := r.Policy
		if p == nil {
			t.Fatalf("%s at %s: no policy", r.Workload, r.Capacity)
		}
		if p.SampleRate < 1 || len(p.Miniatures) == 0 || p.ChangesTotal != uint64(len(p.Changes)) || p.SampledGets > uint64(r.Warmup+r.Reads) {
			t.Errorf("%s at %s: policy %+v", r.Workload, r.Capacity, p)
		}
		for _, c := range p.Changes {
			if c.Gets > uint64(r.Warmup+r.Reads) {
				t.Errorf("%s at %s: a change at Get %d of %d requests", r.Workload, r.Capacity, c.Gets, r.Warmup+r.Reads)
			}
		}
	}
}

// smallSeededConfig returns a corpus of the test traces and zipf:0.9 at
// 5% and 25%, twochoice against LRU: small enough that a test can run
// it several times.
func smallSeededConfig(t *testing.T) Config {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir)
	items, err := Parse(dir + ",zipf:0.9")
	if err != nil {
		t.Fatal(err)
	}
	return Config{Items: items, Capacities: []measure.Capacity{{Share: 0.05}, {Share: 0.25}}, Caches: []string{"twochoice", "lru"},
		Keys: 4000, Requests: 40_000, Seed: 3}
}

// Seeds replays twochoice under seeds 1 to Seeds: its figure is the
// median, its range covers the seed-1 figure of a run with one seed, and
// a second run gives the same figures.
func TestRunSeeds(t *testing.T) {
	if testutil.Race && testing.Short() {
		t.Skip("three corpus runs are slow under the race detector: TestRunSmall covers Run's goroutines, and the suite without -race runs it")
	}
	c := smallSeededConfig(t)
	c.Seeds = 3
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	c.Seeds = 1
	one, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	// At each of the 6 rows: twochoice 3 times, lru, and the two optima.
	if res.Seeds != 3 || res.Replays != 6*6 || one.Seeds != 1 || one.Replays != 6*4 {
		t.Errorf("seeds %d, %d replays; with one seed %d, %d", res.Seeds, res.Replays, one.Seeds, one.Replays)
	}
	spread := false
	for i, r := range res.Rows {
		rg, ok := r.Range[Twochoice]
		tc := r.HitRatio[Twochoice]
		spread = spread || rg[0] < rg[1]
		if !ok || tc < rg[0] || tc > rg[1] || len(r.Range) != 1 {
			t.Errorf("%s at %s: twochoice %v, ranges %v", r.Workload, r.Capacity, tc, r.Range)
		}
		if first := one.Rows[i].HitRatio[Twochoice]; first < rg[0] || first > rg[1] {
			t.Errorf("%s at %s: seed 1 gives %v, outside the seeds' range %v", r.Workload, r.Capacity, first, rg)
		}
		if len(one.Rows[i].Range) != 0 {
			t.Errorf("%s at %s: one seed has ranges %v", r.Workload, r.Capacity, one.Rows[i].Range)
		}
		if tc != again.Rows[i].HitRatio[Twochoice] || rg != again.Rows[i].Range[Twochoice] || r.Policy.Ranking != again.Rows[i].Policy.Ranking {
			t.Errorf("%s at %s: %v %v, then %v %v", r.Workload, r.Capacity, tc, rg, again.Rows[i].HitRatio[Twochoice], again.Rows[i].Range[Twochoice])
		}
	}
	if !spread {
		t.Error("every seed gives the same figures on every row: the seeds do not reach twochoice")
	}
	var b bytes.Buffer
	if err := WriteTable(&b, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "median of its replays under hash seeds 1 to 3") {
		t.Errorf("table:\n%s", b.String())
	}
	b.Reset()
	if err := WriteTable(&b, one); err != nil || strings.Contains(b.String(), "hash seeds") {
		t.Errorf("table with one seed: %v\n%s", err, b.String())
	}
}

// Config.Ranking pins twochoice's ranking on every row: each row's policy
// reports it pinned and never changes ranking, the table says so, the
// JSON carries it, and an unknown ranking is refused. On some row the
// pinned figure differs from the adaptive one.
func TestRunRanking(t *testing.T) {
	if testutil.Race && testing.Short() {
		t.Skip("two corpus runs are slow under the race detector: TestRunSmall covers Run's goroutines, and the suite without -race runs it")
	}
	c := smallSeededConfig(t)
	free, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	c.Ranking = "recency"
	pinned, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	differ := false
	for i, r := range pinned.Rows {
		p := r.Policy
		if p == nil || p.Ranking != "recency" || !p.Pinned {
			t.Fatalf("%s at %s: policy %+v, want pinned to recency", r.Workload, r.Capacity, p)
		}
		for _, ch := range p.Changes {
			if ch.Kind == "ranking" {
				t.Errorf("%s at %s: a pinned ranking changed: %+v", r.Workload, r.Capacity, ch)
			}
		}
		differ = differ || r.HitRatio[Twochoice] != free.Rows[i].HitRatio[Twochoice]
	}
	if !differ {
		t.Error("pinned to recency, twochoice hits as the adaptive cache does on every row: the ranking does not reach it")
	}
	var b bytes.Buffer
	if err := WriteTable(&b, pinned); err != nil || !strings.Contains(b.String(), `pinned to the ranking "recency"`) {
		t.Errorf("table (%v):\n%s", err, b.String())
	}
	js, err := json.Marshal(pinned)
	var top map[string]any
	if err == nil {
		err = json.Unmarshal(js, &top)
	}
	if err != nil || top["ranking"] != "recency" {
		t.Errorf("JSON (%v): ranking %v, want recency", err, top["ranking"])
	}
	var freeTop map[string]any
	if js, err := json.Marshal(free); err != nil || json.Unmarshal(js, &freeTop) != nil || freeTop["ranking"] != nil {
		t.Errorf("an adaptive run's JSON (%v) names a ranking: %v", err, freeTop["ranking"])
	}
	c.Ranking = "lru"
	if _, err := Run(context.Background(), c); !errors.Is(err, ErrConfig) {
		t.Errorf("ranking lru: %v, want ErrConfig", err)
	}
}

// Config.Rankings replays twochoice pinned to every ranking beside its
// adaptive replays, under the same seeds: each row's Pinned figure for a
// ranking is what a run pinned to it (Config.Ranking) gets, the adaptive
// figures are those of a run without Rankings, and the summary is the
// arithmetic of the rows. It is refused with Ranking. With a Timeline as
// well, every replay keeps one (checkTimeline) and the figures stay as
// they are without it.
func TestRunRankings(t *testing.T) {
	if testutil.Race && testing.Short() {
		t.Skip("three corpus runs are slow under the race detector: TestRunSmall covers Run's goroutines, and the suite without -race runs it")
	}
	c := smallSeededConfig(t)
	c.Seeds = 2
	free, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	c.Rankings, c.Timeline = true, 4
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	c.Timeline = 0
	names := store.Rankings()
	// At each of the 6 rows: twochoice twice adaptive and twice per
	// ranking, lru, and the two optima.
	if !slices.Equal(res.Rankings, names) || res.Replays != 6*(2+2*len(names)+3) || free.Replays != 6*(2+3) || free.Rankings != nil {
		t.Fatalf("rankings %v, %d replays (%d without)", res.Rankings, res.Replays, free.Replays)
	}
	c.Rankings, c.Ranking = false, "recency"
	recency, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var margin, cost, single float64
	within, trailing := 0, 0
	sums := map[string]float64{}
	for i, r := range res.Rows {
		if r.HitRatio[Twochoice] != free.Rows[i].HitRatio[Twochoice] || r.Policy.Ranking != free.Rows[i].Policy.Ranking {
			t.Errorf("%s at %s: adaptive %v ending on %s, %v ending on %s without Rankings", r.Workload, r.Capacity,
				r.HitRatio[Twochoice], r.Policy.Ranking, free.Rows[i].HitRatio[Twochoice], free.Rows[i].Policy.Ranking)
		}
		if len(r.Pinned) != len(names) || r.Pinned["recency"] != recency.Rows[i].HitRatio[Twochoice] {
			t.Errorf("%s at %s: pinned %v; recency alone %v", r.Workload, r.Capacity, r.Pinned, recency.Rows[i].HitRatio[Twochoice])
		}
		if len(r.Timeline) != 4 || len(r.PinnedTimeline) != len(names) || free.Rows[i].Timeline != nil {
			t.Errorf("%s at %s: timelines of %d caches and %d rankings; %v without Timeline", r.Workload, r.Capacity, len(r.Timeline), len(r.PinnedTimeline), free.Rows[i].Timeline)
		}
		for name, tl := range r.Timeline {
			checkTimeline(t, r, name, tl, r.HitRatio[name])
		}
		for name, tl := range r.PinnedTimeline {
			checkTimeline(t, r, "pinned "+name, tl, r.Pinned[name])
		}
		best, h, ok := r.BestPinned()
		if !ok || r.Margin == nil {
			t.Fatalf("%s at %s: no best ranking or margin", r.Workload, r.Capacity)
		}
		for name, v := range r.Pinned {
			if v > h || v == h && slices.Index(names, name) < slices.Index(names, best) {
				t.Errorf("%s at %s: best ranking %s (%v), but %s has %v", r.Workload, r.Capacity, best, h, name, v)
			}
			sums[name] += 100 * (v - r.Best)
		}
		margin += 100 * (h - r.Best)
		if 100*(h-r.Best) >= -WithinPoints {
			within++
		}
		cost += 100 * (h - r.HitRatio[Twochoice])
		if 100*(h-r.HitRatio[Twochoice]) > WithinPoints {
			trailing++
		}
	}
	for _, v := range sums {
		single = max(single, v)
	}
	n := float64(len(res.Rows))
	p := res.Summary.Pinned
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if p == nil || p.Within != within || p.Trailing != trailing || !near(p.MeanMargin, margin/n) || !near(p.MeanCost, cost/n) ||
		!near(p.SingleMargin, single/n) || !near(sums[p.Single], single) || free.Summary.Pinned != nil {
		t.Errorf("summary %+v; want within %d, trailing %d, margin %v, cost %v, single %v", p, within, trailing, margin/n, cost/n, single/n)
	}
	var b bytes.Buffer
	if err := WriteRankings(&b, res); err != nil || strings.Count(b.String(), "\n") != 3+len(res.Rows) || !strings.Contains(b.String(), "best ranking") {
		t.Errorf("rankings' table (%v):\n%s", err, b.String())
	}
	b.Reset()
	if err := WriteRankings(&b, free); err != nil || b.Len() != 0 {
		t.Errorf("rankings' table of a run without them (%v):\n%s", err, b.String())
	}
	b.Reset()
	if err := WriteTimeline(&b, res); err != nil || !strings.Contains(b.String(), "over 4 windows") || strings.Count(b.String(), "pinned ") != len(res.Rows)*len(names) {
		t.Errorf("timeline (%v):\n%s", err, b.String())
	}
	b.Reset()
	if err := WriteTimeline(&b, free); err != nil || b.Len() != 0 {
		t.Errorf("timeline of a run without one (%v):\n%s", err, b.String())
	}
	if err := WriteCSV(&b, res); err != nil || !strings.Contains(b.String(), ",pinned_due,") || !strings.Contains(b.String(), ",pinned_probation-window\n") {
		t.Errorf("CSV (%v):\n%s", err, b.String())
	}
	c.Rankings = true
	if _, err := Run(context.Background(), c); !errors.Is(err, ErrConfig) {
		t.Errorf("Ranking with Rankings: %v, want ErrConfig", err)
	}
}

// checkTimeline checks one replay's timeline in row r: as many windows as
// its Window's reads fill, each a hit ratio, which weighted by their
// reads average to the replay's whole figure want.
func checkTimeline(t *testing.T, r Row, name string, tl []float64, want float64) {
	t.Helper()
	n := int((r.Reads + r.Window - 1) / r.Window)
	if r.Window < 1 || len(tl) != n {
		t.Errorf("%s at %s, %s: %d windows of %d reads for %d reads", r.Workload, r.Capacity, name, len(tl), r.Window, r.Reads)
		return
	}
	var hits float64
	for i, h := range tl {
		reads := r.Window
		if i == n-1 {
			reads = r.Reads - int64(n-1)*r.Window
		}
		if h < 0 || h > 1 {
			t.Errorf("%s at %s, %s: window %d has the hit ratio %v", r.Workload, r.Capacity, name, i+1, h)
		}
		hits += h * float64(reads)
	}
	if got := hits / float64(r.Reads); math.Abs(got-want) > 1e-9 {
		t.Errorf("%s at %s, %s: the windows average %v, the whole row %v", r.Workload, r.Capacity, name, got, want)
	}
}

// windowChanges places each ranking and prior change in the window of
// the counted read it came at, 0 for the uncounted warm-up, and leaves
// relocation's changes to WritePolicy.
func TestWindowChanges(t *testing.T) {
	r := Row{Warmup: 100, Reads: 200, Window: 50, Policy: &store.PolicyState{Changes: []store.PolicyChange{
		{Gets: 60, Kind: "ranking", From: "patient", To: "due"},
		{Gets: 101, Kind: "prior", From: "short", To: "long"},
		{Gets: 140, Kind: "relocation", From: "off", To: "on"},
		{Gets: 150, Kind: "ranking", From: "due", To: "frequency"},
		{Gets: 151, Kind: "ranking", From: "frequency", To: "due"},
		{Gets: 300, Kind: "ranking", From: "due", To: "recency"},
	}}}
	want := "0: patient → due; 1: short → long; 1: due → frequency; 2: frequency → due; 4: due → recency"
	if got := windowChanges(r); got != want {
		t.Errorf("changes %q, want %q", got, want)
	}
	r.Window = 0
	if got := windowChanges(r); got != "" {
		t.Errorf("without a timeline: %q", got)
	}
}
