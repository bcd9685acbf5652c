package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/hitratio"
	"github.com/twochoice/twochoice/bench/measure"
)

// Verdict is twochoice's cache against the best other bounded cache at one
// capacity: the one with the highest hit ratio there. A field is nil when
// the run did not measure it for both.
type Verdict struct {
	Capacity int
	Peer     string
	// HitRatio and PeerHitRatio are the hit ratios of the replay.
	HitRatio, PeerHitRatio *float64
	// Speed is twochoice's requests per second over the peer's, on
	// Threads goroutines (the most the run timed).
	Speed   *float64
	Threads int
	// Memory is twochoice's bytes per entry over the peer's.
	Memory *float64
}

// Verdicts returns the verdict at each capacity where the run measured the
// hit ratio of caches.CacheName and of at least one other bounded cache.
func Verdicts(res *measure.Result) []Verdict {
	type figures struct {
		hit, bytes *float64
		ops        map[int]*float64
	}
	// By capacity, by cache: the bounded caches' rows.
	at := map[int]map[string]*figures{}
	for _, r := range res.Rows {
		if r.Capacity == 0 || r.Cache == hitratio.BeladyName {
			continue
		}
		if at[r.Capacity] == nil {
			at[r.Capacity] = map[string]*figures{}
		}
		f := at[r.Capacity][r.Cache]
		if f == nil {
			f = &figures{ops: map[int]*float64{}}
			at[r.Capacity][r.Cache] = f
		}
		if r.HitRatio != nil {
			f.hit = r.HitRatio
		}
		if r.BytesPerEntry != nil {
			f.bytes = r.BytesPerEntry
		}
		if r.Threads > 0 && r.OpsPerSec != nil {
			f.ops[r.Threads] = r.OpsPerSec
		}
	}
	var out []Verdict
	for _, cp := range res.Capacities {
		tc := at[cp][caches.CacheName]
		if tc == nil || tc.hit == nil {
			continue
		}
		best, bestName := (*figures)(nil), ""
		names := make([]string, 0, len(at[cp]))
		for n := range at[cp] {
			names = append(names, n)
		}
		slices.Sort(names) // ties go to the first name, whatever the map's order
		for _, n := range names {
			f := at[cp][n]
			// The other caches: not twochoice's, and bounded (an unbounded
			// cache's rows at a capacity are memory fills, with no hit ratio).
			if strings.HasPrefix(n, "twochoice") || f.hit == nil {
				continue
			}
			if best == nil || *f.hit > *best.hit {
				best, bestName = f, n
			}
		}
		if best == nil {
			continue
		}
		v := Verdict{Capacity: cp, Peer: bestName, HitRatio: tc.hit, PeerHitRatio: best.hit}
		for t := range tc.ops {
			if best.ops[t] != nil && *best.ops[t] > 0 && t > v.Threads {
				v.Threads = t
			}
		}
		if v.Threads > 0 {
			v.Speed = f64(*tc.ops[v.Threads] / *best.ops[v.Threads])
		}
		if tc.bytes != nil && best.bytes != nil && *best.bytes > 0 {
			v.Memory = f64(*tc.bytes / *best.bytes)
		}
		out = append(out, v)
	}
	return out
}

// writeVerdict prints the verdicts as one line, or nothing when there is
// none.
func writeVerdict(w io.Writer, res *measure.Result) {
	vs := Verdicts(res)
	if len(vs) == 0 {
		return
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		s := fmt.Sprintf("at %d, %s: hit ratio %.2f%% against %.2f%% (%+.2f points)", v.Capacity, v.Peer,
			100**v.HitRatio, 100**v.PeerHitRatio, 100*(*v.HitRatio-*v.PeerHitRatio))
		if v.Speed != nil {
			s += fmt.Sprintf(", %.2f× its requests per second on %d goroutine%s", *v.Speed, v.Threads, plural(v.Threads))
		}
		if v.Memory != nil {
			s += fmt.Sprintf(", %.2f× its bytes per entry", *v.Memory)
		}
		parts[i] = s
	}
	fmt.Fprintf(w, "Verdict: twochoice's cache (%s) against the best other cache at each capacity: %s.\n", caches.CacheName, strings.Join(parts, "; "))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func f64(v float64) *float64 { return &v }
