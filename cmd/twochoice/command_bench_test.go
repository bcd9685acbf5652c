package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchFiles writes a small ARC trace, key file and weighted key file.
func benchFiles(t *testing.T) (trace, keys, weighted string) {
	t.Helper()
	dir := t.TempDir()
	var tr, ks, ws strings.Builder
	for i := range 4000 {
		// Half the requests go to 20 hot keys, half sweep the rest.
		k := i * 7 % 900
		if i%2 == 0 {
			k = i % 20
		}
		tr.WriteString(strconv.Itoa(k) + " 1 0 " + strconv.Itoa(i) + "\n")
		ks.WriteString("user:" + strconv.Itoa(k) + "\n")
	}
	for i := range 300 {
		ws.WriteString("pkg/" + strconv.Itoa(i) + "\t" + strconv.Itoa(1000/(i+1)) + "\n")
	}
	trace, keys, weighted = filepath.Join(dir, "t.lis"), filepath.Join(dir, "k.txt"), filepath.Join(dir, "w.tsv")
	for p, s := range map[string]string{trace: tr.String(), keys: ks.String(), weighted: ws.String()} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return trace, keys, weighted
}

func init() { benchWarmup = 20_000 } // see benchWarmup

// quick are flags for a short run.
var quick = []string{"--threads", "1,2", "--duration", "5ms", "--caches", "lru,otter,map"}

// The JSON is an array of objects with the documented fields, left out
// where not measured, and no others.
func TestBenchJSON(t *testing.T) {
	trace, _, _ := benchFiles(t)
	args := append([]string{"bench", "--workload", "trace:" + trace, "--capacity", "50,10%", "--format", "json"}, quick...)
	code, out, errOut := runCLI(args...)
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	allowed := []string{"cache", "workload", "capacity", "threads", "hit_ratio", "ops_per_sec", "p50_ns", "p99_ns", "p999_ns",
		"set_p50_ns", "set_p99_ns", "set_p999_ns", "run_hit_ratio", "gc_cpu_fraction", "allocs_per_op", "bytes_per_entry", "entries", "seed", "load"}
	// lru and otter: 2 capacities × 2 goroutine counts; belady: 2
	// capacities; map: 2 timed rows and 2 memory rows.
	if len(rows) != 14 {
		t.Fatalf("%d rows:\n%s", len(rows), out)
	}
	for _, r := range rows {
		for k := range r {
			if !slices.Contains(allowed, k) {
				t.Errorf("unexpected field %q in %v", k, r)
			}
		}
		if r["workload"] != "arc:t.lis" || r["seed"] != float64(1) {
			t.Errorf("row %v", r)
		}
		bounded := r["cache"] != "map" && r["cache"] != "belady"
		var want []string
		switch {
		case r["cache"] == "belady":
			want = []string{"cache", "workload", "capacity", "hit_ratio"}
			if _, ok := r["threads"]; ok {
				t.Errorf("belady row with goroutines: %v", r)
			}
		case bounded:
			want = []string{"cache", "workload", "capacity", "threads", "hit_ratio", "ops_per_sec", "p99_ns", "bytes_per_entry"}
			if c := r["capacity"]; c != float64(50) && c != float64(46) { // 10% of 460 blocks
				t.Errorf("capacity %v", c)
			}
		case r["threads"] != nil:
			want = []string{"cache", "threads", "hit_ratio", "ops_per_sec", "p99_ns"}
		default:
			want = []string{"cache", "capacity", "bytes_per_entry"}
		}
		for _, k := range want {
			if _, ok := r[k]; !ok {
				t.Errorf("row lacks %q: %v", k, r)
			}
		}
		if h, ok := r["hit_ratio"].(float64); ok && (h <= 0 || h >= 1) {
			t.Errorf("hit ratio %v", h)
		}
	}
}

func TestBenchCSVAndTable(t *testing.T) {
	_, keys, weighted := benchFiles(t)
	args := append([]string{"bench", "--workload", "keys:" + keys, "--capacity", "100", "--format", "csv"}, quick...)
	code, out, errOut := runCLI(args...)
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "cache,workload,capacity,threads,hit_ratio,ops_per_sec,p50_ns,p99_ns,p999_ns,") || len(lines) != 1+8 {
		t.Fatalf("csv:\n%s", out)
	}
	if !strings.HasPrefix(lines[1], "lru,keys:k.txt,100,1,0.") {
		t.Errorf("first row %q", lines[1])
	}
	args = append([]string{"bench", "--workload", "weighted:" + weighted, "--capacity", "10%", "--seed", "9"}, quick...)
	code, out, errOut = runCLI(args...)
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"weighted:w.tsv(keys=300,seed=9)", "--seed 9", "hit ratio", "bytes/entry", "Mreq/s", "Get p50", "p99.9", "GC CPU",
		"map (unbounded: ceiling)", "otter", "machine", "belady"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if errOut != "" {
		t.Errorf("stderr not empty with no terminal: %q", errOut)
	}
}

// The default workload with small sizes, the twochoice load report, the
// verdict that ends the table, and a chart.
func TestBenchZipfAndPlot(t *testing.T) {
	dir := t.TempDir()
	svg, png := filepath.Join(dir, "h.svg"), filepath.Join(dir, "h.png")
	code, out, errOut := runCLI("bench", "--keys", "20000", "--s", "0.9", "--threads", "1", "--duration", "5ms", "--caches", "twochoice-map,twochoice-goleft,lru", "--plot", svg)
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"zipf(s=0.9,n=20000,seed=1)", "twochoice-map (unbounded: ceiling)", "twochoice load", "C most popular keys", "200", "2000"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); !strings.HasPrefix(lines[len(lines)-1], "Verdict: twochoice's cache (twochoice-goleft) against the best other cache at each capacity: at 200, lru: hit ratio ") {
		t.Errorf("the table does not end with the verdict:\n%s", out)
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "lru") {
		t.Errorf("svg: %v", err)
	}
	// --quiet as the other commands take it (the bar is off here anyway:
	// stderr is not a terminal).
	code, _, errOut = runCLI("bench", "--keys", "5000", "--threads", "1", "--duration", "1ms", "--caches", "lru", "--capacity", "100,1000", "--plot", png, "--quiet")
	if fi, err := os.Stat(png); code != 0 || err != nil || fi.Size() == 0 {
		t.Errorf("png: code %d, %v, %q", code, err, errOut)
	}
}

// Bad command lines exit 2 and say what is wrong; a missing file exits 1
// and names it.
func TestBenchErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--workload", "nope"},
		{"--workload", "trace:"},
		{"--workload", "zipf", "--s", "0"},
		{"--keys", "0"},
		{"--keys", "18446744073709551615"},             // past Zipf's 2^53
		{"--workload", "scan", "--keys", "4294967296"}, // a scan is held in memory
		{"--keys", "10000000000"},                      // 1% of them is past MaxCapacity
		{"--capacity", "100000000", "--keys", "1000000000"},
		{"--capacity", "0"},
		{"--capacity", "1%,x"},
		{"--threads", "0"},
		{"--threads", "1,two"},
		{"--caches", "lru,memcached"},
		{"--duration", "0s"},
		{"--format", "xml"},
		{"--report", "docs", "--keys", "5"},
		{"extra"},
		// Flags the workload has no use for, which would be dropped silently.
		{"--workload", "uniform", "--s", "0.9"},
		{"--workload", "scan", "--s", "2"},
		{"--workload", "keys:keys.txt", "--keys", "5"},
		{"--workload", "trace:OLTP.lis", "--keys", "1000"},
		{"--workload", "weighted:w.tsv", "--s", "1"},
	} {
		code, _, errOut := runCLI(append([]string{"bench"}, args...)...)
		if code != exitUsage || errOut == "" {
			t.Errorf("%v: code %d, stderr %q", args, code, errOut)
		}
	}
	missing := filepath.Join(t.TempDir(), "OLTP.lis.zst")
	code, _, errOut := runCLI("bench", "--workload", "trace:"+missing)
	if code != exitFail || !strings.Contains(errOut, missing) || !strings.Contains(errOut, "no such file") {
		t.Errorf("missing trace: code %d, stderr %q", code, errOut)
	}
	bad := filepath.Join(t.TempDir(), "bad.lis")
	if err := os.WriteFile(bad, []byte("1 1 0 0\n2 x 0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI("bench", "--workload", "trace:"+bad)
	if code != exitFail || !strings.Contains(errOut, "bad.lis:2") {
		t.Errorf("bad trace: code %d, stderr %q", code, errOut)
	}
}

// Ctrl-C stops a run with exit status 1 and says so in one line, not as
// "context canceled".
func TestBenchInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command as a process of its own")
	}
	interruptCommand(t, "bench", []string{"bench", "--keys", "1000000", "--threads", "1", "--duration", "10s", "--caches", "map"}, waitFor(500*time.Millisecond))
}

// Capacities written differently that come to the same entries for the
// workload are measured once, and the bench says so on stderr rather than
// dropping one without a word.
func TestBenchMergedCapacitiesNoted(t *testing.T) {
	code, out, errOut := runCLI("bench", "--keys", "5000", "--threads", "1", "--duration", "1ms", "--caches", "lru", "--capacity", "2%,100,1000", "--format", "json", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := "note: --capacity 2% and 100 come to the same 100 entries of the workload's 5000 distinct keys: measured once\n"
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr %q, want the note %q", errOut, want)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	caps := map[float64]int{}
	for _, r := range rows {
		caps[r["capacity"].(float64)]++
	}
	if len(caps) != 2 || caps[100] == 0 || caps[1000] == 0 {
		t.Errorf("rows at capacities %v, want 100 and 1000 once each", caps)
	}
}

// The bounds of bench's flags: a cache that cannot take a capacity is
// skipped with a note and the rest measured; a capacity past the
// workload's keys or past the harness's bound, a --duration too short to
// measure anything but the clock, and more goroutines than the harness
// holds streams for are usage errors, refused before any work.
func TestBenchBounds(t *testing.T) {
	t.Run("capacity", func(t *testing.T) {
		code, out, errOut := runCLIWithin(t, 60*time.Second, "bench", "--keys", "100", "--duration", "5ms", "--threads", "1", "--caches", "twochoice-goleft,2q,map", "--format", "csv")
		if code != 0 || !strings.Contains(errOut, "skipped twochoice-goleft at capacity 1") || strings.Count(errOut, "\n") != 1 {
			t.Fatalf("code %d, stderr %q", code, errOut)
		}
		for _, want := range []string{"\n2q,\"zipf(s=1,n=100,seed=1)\",1,", "\ntwochoice-goleft,\"zipf(s=1,n=100,seed=1)\",10,"} {
			if !strings.Contains(out, want) {
				t.Errorf("no %q row:\n%s", want, out)
			}
		}
		if strings.Contains(out, "\ntwochoice-goleft,\"zipf(s=1,n=100,seed=1)\",1,") {
			t.Errorf("a row for the skipped pair:\n%s", out)
		}
		code, _, errOut = runCLIWithin(t, 60*time.Second, "bench", "--keys", "1000", "--capacity", "2000", "--duration", "5ms", "--threads", "1")
		if code != exitUsage || !strings.Contains(errOut, "distinct keys") {
			t.Errorf("capacity past the keys: code %d, stderr %q", code, errOut)
		}
		code, _, errOut = runCLIWithin(t, 60*time.Second, "bench", "--keys", "1000", "--capacity", "1000000000000", "--duration", "5ms", "--threads", "1")
		if code != exitUsage || !strings.Contains(errOut, "at most 16777216") {
			t.Errorf("huge capacity: code %d, stderr %q", code, errOut)
		}
	})
	t.Run("duration", func(t *testing.T) {
		for _, d := range []string{"1ns", "999us"} {
			code, _, errOut := runCLIWithin(t, 30*time.Second, "bench", "--keys", "10000", "--caches", "twochoice-goleft,map", "--duration", d, "--threads", "1")
			if code != exitUsage || !strings.Contains(errOut, "--duration") {
				t.Errorf("--duration %s: code %d, stderr %q", d, code, errOut)
			}
		}
	})
	t.Run("threads", func(t *testing.T) {
		code, _, errOut := runCLIWithin(t, 10*time.Second, "bench", "--keys", "1000", "--threads", "1,100000", "--duration", "1ms")
		if code != exitUsage || !strings.Contains(errOut, "at most 1024") {
			t.Errorf("code %d, stderr %q", code, errOut)
		}
	})
}
