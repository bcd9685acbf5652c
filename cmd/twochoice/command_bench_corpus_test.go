package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bench --corpus on a folder (a trace and two files that are not traces)
// and a Zipf stream: JSON for scripts, the table with its summary, CSV,
// and the margins' chart.
func TestBenchCorpus(t *testing.T) {
	trace, _, _ := benchFiles(t)
	dir := filepath.Dir(trace)
	svg := filepath.Join(t.TempDir(), "m.svg")
	args := []string{"bench", "--corpus", dir + ",zipf:0.9", "--keys", "3000", "--requests", "20000", "--capacity", "5%,25%"}
	code, out, errOut := runCLI(append(args, "--format", "json", "--plot", svg)...)
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	var res struct {
		Caches []string `json:"caches"`
		Rows   []struct {
			Workload string             `json:"workload"`
			Capacity string             `json:"capacity"`
			Entries  int                `json:"entries"`
			HitRatio map[string]float64 `json:"hit_ratio"`
			Margin   *float64           `json:"margin_points"`
			Policy   *struct {
				Ranking string `json:"ranking"`
				Changes []struct {
					Kind string `json:"kind"`
				} `json:"changes"`
			} `json:"policy"`
		} `json:"rows"`
		Summary struct {
			Rows      int      `json:"rows"`
			Within    int      `json:"within_half_point"`
			Mean      float64  `json:"mean_margin_points"`
			GapClosed *float64 `json:"gap_closed"`
		} `json:"summary"`
		Wall float64 `json:"wall_seconds"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(res.Rows) != 4 || res.Summary.Rows != 4 || res.Summary.GapClosed == nil || res.Wall <= 0 ||
		strings.Join(res.Caches, ",") != "twochoice,otter,ristretto,lru,arc,2q" {
		t.Fatalf("result:\n%s", out)
	}
	for _, r := range res.Rows {
		if r.Margin == nil || r.HitRatio["twochoice"] > r.HitRatio["belady"] || r.HitRatio["belady"] <= 0 || r.Policy == nil || r.Policy.Ranking == "" {
			t.Errorf("row %+v", r)
		}
	}
	if res.Rows[0].Workload != "t" || res.Rows[2].Workload != "zipf:0.9" || res.Rows[3].Entries != 750 {
		t.Errorf("rows %+v", res.Rows)
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.Contains(string(b), "margin") || !strings.Contains(string(b), "zipf:0.9") {
		t.Errorf("svg: %v", err)
	}
	code, out, errOut = runCLI(args...)
	if code != 0 {
		t.Fatalf("table: code %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"2 workloads × 2 capacities = 4 rows", "twochoice", "belady", "best peer", "margin", "within 0.5 point", "gap to belady closed"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// Each flag's section after the table.
	for flag, wants := range map[string][]string{
		"--policy":     {"twochoice's eviction policy at the end of each row", "ranking", "prior", "relocating", "1 in "},
		"--rankings":   {"pinned to each of its", "best ranking", "ended on", "each row's best ranking, pinned", "the best single ranking"},
		"--timeline=4": {"over 4 windows of its counted reads", "changes", "belady"},
	} {
		code, out, errOut = runCLI(append(args, "--caches", "twochoice,lru", flag)...)
		if code != 0 {
			t.Fatalf("%s: code %d, stderr %q", flag, code, errOut)
		}
		for _, want := range wants {
			if !strings.Contains(out, want) {
				t.Errorf("%s's table lacks %q:\n%s", flag, want, out)
			}
		}
	}
	code, out, _ = runCLI(append(args, "--format", "csv", "--caches", "twochoice,lru")...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 5 || !strings.HasPrefix(lines[0], "workload,capacity,entries,distinct_keys,reads,twochoice,lru,belady,belady-bypass,best_peer,margin_points") {
		t.Errorf("csv: code %d\n%s", code, out)
	}
}

// Bad corpus command lines exit 2 and say what is wrong; a missing path
// exits 1 and names it.
func TestBenchCorpusErrors(t *testing.T) {
	trace, _, _ := benchFiles(t)
	dir := filepath.Dir(trace)
	for _, args := range [][]string{
		{"--corpus", dir, "--threads", "1"},
		{"--corpus", dir, "--workload", "zipf"},
		{"--corpus", dir, "--report", "docs"},
		{"--requests", "5"},
		{"--rounds", "3"},
		{"--seeds", "3"},
		{"--policy"},
		{"--corpus", dir, "--policy", "--format", "json"},
		{"--corpus", dir, "--rounds", "0"},
		{"--corpus", dir, "--seeds", "0"},
		{"--ranking", "due"},
		{"--corpus", dir, "--ranking", "lru"},
		{"--rankings"},
		{"--corpus", dir, "--rankings", "--ranking", "due"},
		{"--timeline", "4"},
		{"--corpus", dir, "--timeline", "4", "--format", "csv"},
		{"--corpus", dir, "--timeline", "-1"},
		{"--corpus", dir, "--timeline", "101"},
		{"--corpus", dir, "--keys", "500"}, // no zipf:S to shape
		{"--corpus", dir, "--caches", "lru,arc"},
		{"--corpus", dir, "--caches", "twochoice,map"},
		{"--corpus", dir, "--caches", "twochoice,memcached"},
		{"--corpus", dir, "--capacity", "0"},
		{"--corpus", dir, "--capacity", "5000"}, // past the trace's 460 blocks
		{"--corpus", "zipf:0"},
		{"--corpus", "zipf:1", "--requests", "0"},
		{"--corpus", t.TempDir()}, // no trace in it
		{"--corpus", dir + "," + trace},
	} {
		code, _, errOut := runCLI(append([]string{"bench"}, args...)...)
		if code != exitUsage || errOut == "" {
			t.Errorf("%v: code %d, stderr %q", args, code, errOut)
		}
	}
	missing := filepath.Join(t.TempDir(), "traces")
	code, _, errOut := runCLI("bench", "--corpus", missing)
	if code != exitFail || !strings.Contains(errOut, missing) || !strings.Contains(errOut, "no such file") {
		t.Errorf("missing folder: code %d, stderr %q", code, errOut)
	}
}
