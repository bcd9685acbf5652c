package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/measure"
)

// The verdict compares twochoice's cache with the bounded cache of the
// highest hit ratio at each capacity, never with Belady's optimum or an
// unbounded cache, on the most goroutines timed for both.
func TestVerdict(t *testing.T) {
	res := &measure.Result{Capacities: []int{100, 1000}}
	bounded := func(name string, cp int, hit, bytes float64, ops ...float64) {
		for i, o := range ops {
			res.Rows = append(res.Rows, measure.Row{Cache: name, Capacity: cp, Threads: i + 1, HitRatio: f(hit), BytesPerEntry: f(bytes), OpsPerSec: f(o)})
		}
	}
	bounded(caches.CacheName, 100, 0.50, 40, 3e6, 6e6)
	bounded("otter", 100, 0.52, 80, 1e6, 2e6)
	bounded("lru", 100, 0.45, 100, 2e6, 1e6)
	bounded(caches.CacheName, 1000, 0.70, 30, 3e6, 4e6)
	bounded("otter", 1000, 0.60, 80, 1e6, 1e6)
	bounded("lru", 1000, 0.65, 120, 2e6, 5e6)
	bounded("twochoice-dchoice", 1000, 0.99, 10, 9e6, 9e6)
	for _, cp := range []int{100, 1000} {
		res.Rows = append(res.Rows,
			measure.Row{Cache: "belady", Capacity: cp, HitRatio: f(0.9)},
			measure.Row{Cache: caches.MapName, Capacity: cp, BytesPerEntry: f(20)},
			measure.Row{Cache: "map", Capacity: cp, BytesPerEntry: f(20)})
	}
	res.Rows = append(res.Rows, measure.Row{Cache: "map", Threads: 2, HitRatio: f(0.95), OpsPerSec: f(1e7)})

	vs := Verdicts(res)
	if len(vs) != 2 {
		t.Fatalf("%d verdicts, want 2: %+v", len(vs), vs)
	}
	near := func(p *float64, want float64) bool { return p != nil && math.Abs(*p-want) < 1e-9 }
	if v := vs[0]; v.Capacity != 100 || v.Peer != "otter" || !near(v.HitRatio, 0.50) || !near(v.PeerHitRatio, 0.52) ||
		v.Threads != 2 || !near(v.Speed, 3) || !near(v.Memory, 0.5) {
		t.Errorf("at 100: %+v", v)
	}
	if v := vs[1]; v.Capacity != 1000 || v.Peer != "lru" || !near(v.Speed, 0.8) || !near(v.Memory, 0.25) {
		t.Errorf("at 1000: %+v", v)
	}
	var b bytes.Buffer
	writeVerdict(&b, res)
	line := b.String()
	for _, want := range []string{"Verdict: twochoice's cache (twochoice-goleft)", "at 100, otter: hit ratio 50.00% against 52.00% (-2.00 points), 3.00× its requests per second on 2 goroutines, 0.50× its bytes per entry",
		"at 1000, lru: hit ratio 70.00% against 65.00% (+5.00 points)"} {
		if !strings.Contains(line, want) {
			t.Errorf("verdict lacks %q:\n%s", want, line)
		}
	}
	if strings.Count(line, "\n") != 1 {
		t.Errorf("verdict of %d lines:\n%s", strings.Count(line, "\n"), line)
	}

	// No verdict without twochoice's cache, or without another cache.
	for _, drop := range []string{caches.CacheName, "otter|lru"} {
		r := &measure.Result{Capacities: res.Capacities}
		for _, row := range res.Rows {
			if !strings.Contains("|"+drop+"|", "|"+row.Cache+"|") {
				r.Rows = append(r.Rows, row)
			}
		}
		if vs := Verdicts(r); len(vs) != 0 {
			t.Errorf("without %s: %+v", drop, vs)
		}
	}
}
