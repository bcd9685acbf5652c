package report

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/corpus"
	"github.com/twochoice/twochoice/bench/measure"
	"github.com/twochoice/twochoice/internal/testutil"
	"github.com/twochoice/twochoice/store"
)

func f(x float64) *float64 { return &x }

// fake is a small result of every measure for two caches.
func fake() *measure.Result {
	res := &measure.Result{
		Config:     measure.Config{Seed: 3, Threads: []int{1, 2}, Duration: time.Second, Rounds: 5, Measures: measure.MeasureAll},
		Workload:   "zipf(s=1,n=1000,seed=3)",
		Capacities: []int{1000, 15000}, Ceiling: 0.8, TimerOverhead: 30, SampleEvery: 64,
	}
	for _, cp := range []int{1000, 15000} {
		for _, t := range []int{1, 2} {
			res.Rows = append(res.Rows, measure.Row{Cache: "lru", Capacity: cp, Threads: t, HitRatio: f(0.3283), OpsPerSec: f(2e6 * float64(t)),
				P50NS: f(95), P99NS: f(1500), P999NS: f(2.5e6), BytesPerEntry: f(110.04), GCCPUFraction: f(0.05), AllocsPerOp: f(0.4)})
		}
	}
	for _, t := range []int{1, 2} {
		res.Rows = append(res.Rows, measure.Row{Cache: "map", Threads: t, HitRatio: f(0.8), OpsPerSec: f(1e7)})
	}
	for _, cp := range []int{1000, 15000} {
		res.Rows = append(res.Rows, measure.Row{Cache: "map", Capacity: cp, BytesPerEntry: f(24)})
	}
	return res
}

func TestMarkdown(t *testing.T) {
	var b bytes.Buffer
	res := fake()
	hitTable(&b, res, []int{1000, 15000}, map[string][]float64{"lru": {32.83, 64.63}})
	want := "| cache | 1,000 | 15,000 |\n|---|---|---|\n| lru | 32.83% / 32.83% | 32.83% / 64.63% |\n"
	if b.String() != want {
		t.Errorf("hit table:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	throughputTable(&b, res)
	for _, want := range []string{"| lru | 1 | 2.00 | 0.20 | - | 95ns | 1.50µs | 2.50ms |", "| map (unbounded) | 2 | 10.00 | 1.00 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("throughput table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	memoryTable(&b, res)
	if !strings.Contains(b.String(), "| lru | 110.0 | 110.0 |") || !strings.Contains(b.String(), "| map | 24.0 | 24.0 |") {
		t.Errorf("memory table:\n%s", b.String())
	}
	if thousands(1234567) != "1,234,567" || thousands(15) != "15" {
		t.Error("thousands")
	}
}

func TestTableAndChart(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, fake()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"map (unbounded: ceiling)", "80.00%", "32.83%", "110.0", "2.50ms", "5.0%", "--seed 3"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if !regexp.MustCompile(`(?m)^\s+map\s+unbounded\s+1\s`).MatchString(b.String()) {
		t.Errorf("the timed runs do not call map's capacity unbounded:\n%s", b.String())
	}
	ch := HitRatioChart(fake(), "")
	if ch.LogX || len(ch.Series) != 2 || ch.Series[0].Name != "lru" || len(ch.Series[0].X) != 2 {
		t.Errorf("chart %+v", ch)
	}
	var svg bytes.Buffer
	if err := ch.SVG(&svg); err != nil || !strings.Contains(svg.String(), "unbounded: 80.0%") {
		t.Errorf("svg: %v", err)
	}
}

func TestGenerateNeedsTraces(t *testing.T) {
	dir := t.TempDir()
	err := Generate(context.Background(), Options{Dir: filepath.Join(dir, "docs"), Traces: dir})
	if err == nil || !strings.Contains(err.Error(), "OLTP.lis.zst") || !strings.Contains(err.Error(), "TWOCHOICE_TRACES") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "docs")); !os.IsNotExist(err) {
		t.Fatal("wrote into the folder before failing")
	}
}

// A cache's load line shows no fluid limit ("-"), as the store's own
// report has none for a cache; an unbounded store's shows its limit.
func TestLoadLinesFluid(t *testing.T) {
	res := &measure.Result{Capacities: []int{100}}
	for _, o := range []store.CacheOptions[int, int]{{MaxEntries: 100, Seed: 1}, {}} {
		var s interface {
			Set(int, int)
			Report() *store.Report
		}
		var err error
		if o.MaxEntries > 0 {
			s, err = store.NewCache[int, int](o)
		} else {
			s, err = store.NewMap[int, int](store.MapOptions{Seed: 1})
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range 500 {
			s.Set(i, i)
		}
		name := caches.MapName
		if o.MaxEntries > 0 {
			name = "twochoice-goleft"
		}
		res.Rows = append(res.Rows, measure.Row{Cache: name, Capacity: 100, Threads: 1, Load: s.Report()})
	}
	var b bytes.Buffer
	writeLoads(&b, res)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("want a heading and 2 lines:\n%s", b.String())
	}
	if !strings.Contains(lines[1], "of buckets (-), stash 0 (-)") {
		t.Errorf("the cache's line shows a fluid limit: %s", lines[1])
	}
	if strings.Contains(lines[2], "(-)") {
		t.Errorf("the unbounded store's line lacks its fluid limit: %s", lines[2])
	}
	t.Logf("\n%s", b.String())
}

// A report directory that cannot take a file is refused before minutes of
// comparisons, not when their results are written.
func TestGenerateUnwritableDir(t *testing.T) {
	dir := testutil.ReadOnlyDir(t)
	traces := t.TempDir()
	for _, name := range []string{"OLTP.lis.zst", "P12.lis.zst"} {
		// Not zstd: a run that got as far as reading them fails otherwise.
		if err := os.WriteFile(filepath.Join(traces, name), []byte("not a trace"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := Generate(context.Background(), Options{Dir: dir, Traces: traces})
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("Generate into a read-only directory: %v", err)
	}
}

// The README's table: twochoice's cache, otter and the two maps, with the
// corpus's mean hit ratio, the rows within half a point, the timed runs
// and the memory at the largest capacity.
func TestSummaryTable(t *testing.T) {
	tp := &measure.Result{Config: measure.Config{Threads: []int{1, 2}}}
	for _, c := range []string{caches.CacheName, "otter", caches.MapName, "map"} {
		for _, th := range []int{1, 2} {
			tp.Rows = append(tp.Rows, measure.Row{Cache: c, Threads: th, OpsPerSec: f(float64(len(c)*th) * 1e6)})
		}
	}
	mem := &measure.Result{Capacities: []int{10, 1_000_000}}
	for _, c := range []string{caches.CacheName, "otter", caches.MapName, "map"} {
		mem.Rows = append(mem.Rows, measure.Row{Cache: c, Capacity: 10, BytesPerEntry: f(999)},
			measure.Row{Cache: c, Capacity: 1_000_000, BytesPerEntry: f(float64(len(c)))})
	}
	m := 1.0
	corp := &corpus.Result{Rows: []corpus.Row{
		{HitRatio: map[string]float64{corpus.Twochoice: 0.5, "otter": 0.4}, Margin: &m},
		{HitRatio: map[string]float64{corpus.Twochoice: 0.3, "otter": 0.2}, Margin: &m},
	}}
	corp.Summary = corpus.Summarize(corp.Rows)
	corp.Seeds = 3
	m2 := -1.5
	syn := &corpus.Result{Rows: append(slices.Clone(corp.Rows), corpus.Row{HitRatio: map[string]float64{corpus.Twochoice: 0.1, "otter": 0.2}, Margin: &m2})}
	syn.Summary = corpus.Summarize(syn.Rows)
	m3 := -0.2
	law := &corpus.Result{Rows: []corpus.Row{corp.Rows[0], {HitRatio: map[string]float64{corpus.Twochoice: 0.1, "otter": 0.102}, Margin: &m3},
		{HitRatio: map[string]float64{corpus.Twochoice: 0.1, "otter": 0.2}, Margin: &m2}}}
	law.Summary = corpus.Summarize(law.Rows)
	var b bytes.Buffer
	writeSummary(&b, tp, mem, corp, syn, law)
	for _, want := range []string{
		"| | twochoice cache | otter | twochoice map | Go map + RWMutex |",
		"| hit ratio, mean of the corpus's 2 rows ([traces](docs/traces.md) at 1 to 25% of their keys) | 40.00% | 30.00% | ceiling | ceiling |",
		"| rows within 0.5 point of the best other cache, or ahead | 2 of 2 |  |  |  |",
		"| the same on the 3 rows of synthetic shapes (`bench --corpus synthetic:all`), mean margin | 2 of 3, +0.17 points |  |  |  |",
		"| the same on the 3 rows of Zipf and aging laws (`bench --corpus zipf:S,aging:S`), mean margin | 2 of 3, -0.23 points |  |  |  |",
		"| million requests/s, Zipf 1.0 over 1M keys, a cache of 100,000, 2 goroutines | 32.0 | 10.0 | 26.0 | 6.0 |",
		"| bytes per entry, 1,000,000 uint64 entries | 16.0 | 5.0 | 13.0 | 3.0 |",
		"twochoice's hit ratios are the medians of its replays under hash seeds 1 to 3;",
		"[docs/bench-results.md](docs/bench-results.md)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

// smallCorpus replays the generated items of spec at caps over 1,000 keys,
// 2,000 requests counted (seed 9), twochoice against LRU: a section's
// input in a fraction of a second.
func smallCorpus(t *testing.T, spec string, caps []measure.Capacity) ([]corpus.Item, *corpus.Result) {
	t.Helper()
	items, err := corpus.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	res, err := corpus.Run(context.Background(), corpus.Config{Items: items, Capacities: caps,
		Rounds: 1, Keys: 1000, Requests: 2000, Seed: 9, Caches: []string{corpus.Twochoice, "lru"}})
	if err != nil {
		t.Fatal(err)
	}
	return items, res
}

// The synthetic shapes' section: its heading, the sizes they ran at, the
// summary line and a row per shape and capacity.
func TestWriteSynthetic(t *testing.T) {
	items, res := smallCorpus(t, "synthetic:all", corpus.DefaultCapacities())
	var b bytes.Buffer
	writeSynthetic(&b, res)
	out := b.String()
	for _, want := range []string{"## Synthetic shapes", "over 1,000 ranks, 2,000 requests counted after as many (seed 9)",
		"twochoice is within 0.5 point of the best other cache, or ahead, on", "| shape | capacity | twochoice | lru | belady | margin |",
		"| synthetic:drift | 1% |", "| synthetic:uniform | 25% |"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if rows := strings.Count(out, "\n| synthetic:"); rows != 4*len(items) {
		t.Errorf("%d rows, want %d:\n%s", rows, 4*len(items), out)
	}
}

// Every corpus run of the report is one that corpus.Run accepts, so that
// Generate does not fail at its last run after the others' tens of
// minutes; and Check refuses what Run would (a law without requests).
func TestCorpusPartsValid(t *testing.T) {
	shapes, err := corpus.Parse("synthetic:all")
	if err != nil {
		t.Fatal(err)
	}
	laws, err := corpus.Parse(lawItems)
	if err != nil {
		t.Fatal(err)
	}
	traces := []corpus.Item{{Name: "a", Path: "a.trace"}}
	for _, p := range corpusParts(1, traces, shapes, laws) {
		if err := p.cfg.Check(); err != nil {
			t.Errorf("%s: %v", p.name, err)
		}
	}
	bad := corpus.Config{Items: laws, Capacities: lawCapacities, Keys: zipfKeys}
	if err := bad.Check(); !errors.Is(err, corpus.ErrConfig) {
		t.Errorf("Check of laws without requests: %v, want ErrConfig", err)
	}
}

// The laws' section: its heading, the sizes they ran at, the summary line
// and a row per law and capacity, at the report's own items and
// capacities.
func TestWriteLaws(t *testing.T) {
	items, res := smallCorpus(t, lawItems, lawCapacities)
	var b bytes.Buffer
	writeLaws(&b, res)
	out := b.String()
	for _, want := range []string{"## Zipf and aging laws", "over 1,000 keys", "2,000 requests counted after as many (seed 9)",
		"twochoice is within 0.5 point of the best other cache, or ahead, on", "| law | capacity | twochoice | lru | belady | margin |",
		"| zipf:0.6 | 1% |", "| zipf:1.2 | 10% |", "| aging:1.2 | 10% |"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if rows := strings.Count(out, "\n| zipf:") + strings.Count(out, "\n| aging:"); rows != len(lawCapacities)*len(items) {
		t.Errorf("%d rows, want %d:\n%s", rows, len(lawCapacities)*len(items), out)
	}
}

// The choosing section: a summary line per corpus that has pinned
// replays, and a row per workload and capacity with the best ranking, its
// margin and what the adaptive policy gives up to it.
func TestWriteChoosing(t *testing.T) {
	m, m2 := 1.0, -1.0
	corp := &corpus.Result{Rankings: []string{"due", "recency"}, Rows: []corpus.Row{
		{Workload: "a", Capacity: "1%", HitRatio: map[string]float64{corpus.Twochoice: 0.5, "otter": 0.49}, Best: 0.49, BestPeer: "otter", Margin: &m,
			Pinned: map[string]float64{"due": 0.52, "recency": 0.4}, Policy: &store.PolicyState{Ranking: "recency"}},
		{Workload: "a", Capacity: "5%", HitRatio: map[string]float64{corpus.Twochoice: 0.3, "otter": 0.31}, Best: 0.31, BestPeer: "otter", Margin: &m2,
			Pinned: map[string]float64{"due": 0.2, "recency": 0.3}},
	}}
	corp.Summary = corpus.Summarize(corp.Rows)
	syn := &corpus.Result{Rows: slices.Clone(corp.Rows[:1])}
	syn.Rows[0].Pinned = nil
	syn.Summary = corpus.Summarize(syn.Rows)
	var b bytes.Buffer
	writeChoosing(&b, corp, syn)
	out := b.String()
	for _, want := range []string{
		"## How the policy chooses", "each of its 2 rankings",
		"- trace corpus: the adaptive policy is within on 1 rows of 2, mean margin +0.00; each row's best ranking, pinned, within on 1, mean margin +1.00 " +
			"(the adaptive policy gives up 1.00 points a row to it, more than 0.5 on 1 rows); the best single ranking over these rows, due, within on 1, mean margin -4.00.",
		"| a | 1% | 50.00 | +1.00 | due | 52.00 | +3.00 | +2.00 | recency |",
		"| a | 5% | 30.00 | -1.00 | recency | 30.00 | -1.00 | +0.00 | - |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "synthetic shapes:") || strings.Count(out, "\n| a |") != 2 {
		t.Errorf("a corpus without pinned replays has a summary or rows:\n%s", out)
	}
}
