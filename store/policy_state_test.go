package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/twochoice/twochoice/internal/testutil"
)

// TestPolicyStateNew checks a new cache's report: the starting setting,
// every ranking's miniature, no evidence and no change.
func TestPolicyStateNew(t *testing.T) {
	s := newTestCache(t, CacheOptions[uint64, int]{MaxEntries: 4096, Seed: 1})
	ps := s.Policy()
	if ps.Ranking != "patient" || ps.Prior != "short" || ps.Relocating {
		t.Errorf("a new cache reports %s, %s prior, relocating %v; want patient, short, false", ps.Ranking, ps.Prior, ps.Relocating)
	}
	// The largest power-of-two rate that leaves miniatures of at least
	// 2 × 256 / 2 = 256 entries: 4096 / 16.
	if ps.SampleRate != 16 || ps.MiniatureEntries != 256 || ps.Bar != zSwitch {
		t.Errorf("sample rate %d, miniatures of %d, bar %v; want 16, 256, %v", ps.SampleRate, ps.MiniatureEntries, ps.Bar, float64(zSwitch))
	}
	if len(ps.Miniatures) != numRankings {
		t.Fatalf("%d miniatures, want %d", len(ps.Miniatures), numRankings)
	}
	names := map[string]bool{}
	for _, m := range ps.Miniatures {
		names[m.Ranking] = true
		if m.HitRatio != 0 || m.Lead != 0 {
			t.Errorf("miniature %s: hit ratio %v, lead %v before any Get", m.Ranking, m.HitRatio, m.Lead)
		}
	}
	if len(names) != numRankings || !names["patient"] || !names["due"] {
		t.Errorf("miniature names %v: want %d distinct, patient and due among them", names, numRankings)
	}
	if ps.SampledGets != 0 || ps.Periods != 0 || ps.ChangesTotal != 0 || len(ps.Changes) != 0 {
		t.Errorf("before any Get: %d sampled Gets, %d periods, %d changes (%d listed)", ps.SampledGets, ps.Periods, ps.ChangesTotal, len(ps.Changes))
	}
}

// TestPolicyStateTracksChanges replays adaptRun's workload (a shifting
// working set, a loop over twice the cache, the set again) and checks
// the report against the cache's own state: the changes listed, applied
// in order to the starting setting, give the setting in use; each came
// with a lead past the bar, at a Get count that only grows; the rankings
// the cache moved between are those a poll after every request saw; the
// miniatures' hit ratios rank the loop's rankings as the loop does. The
// same seed gives the same report.
func TestPolicyStateTracksChanges(t *testing.T) {
	testutil.SkipOneGoroutine(t, "the policy replays a changing workload")
	t.Parallel()
	seed := seedFor(t)
	const maxE, phase = 2048, 40 * 2048
	ps, polled, atLoop := policyRun(t, seed, maxE, phase)
	t.Logf("%d sampled Gets in %d periods, %d changes; now %s, %s prior, relocating %v", ps.SampledGets, ps.Periods, ps.ChangesTotal, ps.Ranking, ps.Prior, ps.Relocating)
	for _, c := range ps.Changes {
		t.Logf("  at Get %d (sampled %d): %s %s → %s, lead %.2f, trial %v", c.Gets, c.SampledGets, c.Kind, c.From, c.To, c.Lead, c.Trial)
	}
	if ps.ChangesTotal == 0 {
		t.Fatal("no change over a workload that moves from a shifting set to a loop and back")
	}
	if ps.ChangesTotal > MaxPolicyChanges {
		t.Fatalf("%d changes: more than the %d listed, so the replay below cannot check them all", ps.ChangesTotal, MaxPolicyChanges)
	}
	if uint64(len(ps.Changes)) != ps.ChangesTotal {
		t.Fatalf("%d changes listed of %d", len(ps.Changes), ps.ChangesTotal)
	}
	ranking, prior, reloc := "patient", "short", "off"
	var last uint64
	var rankingMoves []string
	trials := 0 // changes of relocation's trial seen
	for i, c := range ps.Changes {
		if c.Gets < last || c.Gets > 3*phase || c.SampledGets > c.Gets {
			t.Errorf("change %d at Get %d (sampled %d), after one at %d of %d", i, c.Gets, c.SampledGets, last, 3*phase)
		}
		last = c.Gets
		var cur *string
		switch c.Kind {
		case changeRanking:
			cur = &ranking
			rankingMoves = append(rankingMoves, c.To)
		case changePrior:
			cur = &prior
		case changeRelocation:
			cur = &reloc
		default:
			t.Fatalf("change %d of kind %q", i, c.Kind)
		}
		if c.From != *cur || c.To == c.From {
			t.Errorf("change %d: %s from %s to %s, but the %s was %s", i, c.Kind, c.From, c.To, c.Kind, *cur)
		}
		*cur = c.To
		switch {
		case c.Trial && (c.Kind != changeRelocation || c.To == "on" && trials != 0 || c.To == "off" && trials != 1):
			t.Errorf("change %d: %s to %s marked as relocation's trial, after %d changes of the trial", i, c.Kind, c.To, trials)
		case c.Trial && c.To == "off" && c.Lead >= trialBar:
			t.Errorf("change %d: relocation's trial failed on a lead of %.2f, past its bar of %v", i, c.Lead, float64(trialBar))
		case c.Trial:
		case c.Kind == changeRelocation && c.To == "off":
			if c.Lead >= -ps.Bar {
				t.Errorf("change %d: relocation off on a lead of %.2f, not under −%v", i, c.Lead, ps.Bar)
			}
		case c.Lead <= ps.Bar:
			t.Errorf("change %d: %s to %s on a lead of %.2f, not past %v", i, c.Kind, c.To, c.Lead, ps.Bar)
		}
		if c.Trial {
			trials++
		} else if c.Kind == changeRelocation && trials == 0 {
			t.Errorf("change %d: relocation %s before its trial", i, c.To)
		}
	}
	// A cache that Gets tries relocation at its first period.
	if trials == 0 || ps.Changes[0].Kind != changeRelocation || ps.Changes[0].SampledGets > uint64(ps.SampledGets/ps.Periods+1) {
		t.Errorf("relocation's trial did not start with the first period: %+v", ps.Changes[0])
	}
	if ranking != ps.Ranking || prior != ps.Prior || (reloc == "on") != ps.Relocating {
		t.Errorf("the changes lead to %s, %s prior, relocation %s; the report says %s, %s, %v", ranking, prior, reloc, ps.Ranking, ps.Prior, ps.Relocating)
	}
	if !reflect.DeepEqual(rankingMoves, polled) {
		t.Errorf("ranking changes listed %v; polled after every request %v", rankingMoves, polled)
	}
	// At the loop's end, the miniatures that keep a stable subset (λ = 0)
	// hit it and recency does not.
	hr := map[string]float64{}
	for _, m := range atLoop.Miniatures {
		hr[m.Ranking] = m.HitRatio
		if m.HitRatio < 0 || m.HitRatio > 1 || math.IsNaN(m.Lead) {
			t.Errorf("miniature %s: hit ratio %v, lead %v", m.Ranking, m.HitRatio, m.Lead)
		}
		if m.Ranking == atLoop.Ranking && m.Lead != 0 {
			t.Errorf("the ranking in use, %s, leads itself by %v", m.Ranking, m.Lead)
		}
	}
	t.Logf("at the loop's end: %s in use; miniatures' hit ratios %v", atLoop.Ranking, hr)
	if hr["due"] < 0.2 || hr["recency"] > 0.05 {
		t.Errorf("at the loop's end the due miniature hit %.3f and recency's %.3f; want over 0.2 and under 0.05", hr["due"], hr["recency"])
	}
	again, _, _ := policyRun(t, seed, maxE, phase)
	if !reflect.DeepEqual(ps, again) {
		t.Errorf("a second run with the same seed reports\n%+v\nthe first\n%+v", again, ps)
	}
	if _, err := json.Marshal(ps); err != nil {
		t.Errorf("json.Marshal: %v", err)
	}
}

// policyRun replays adaptRun's three phases on a cache of maxE entries
// and returns its PolicyState at the end, the rankings the cache moved to
// as a poll after every request saw them, and the PolicyState at the
// loop's end.
func policyRun(t *testing.T, seed uint64, maxE, phase int) (ps PolicyState, polled []string, atLoop PolicyState) {
	s := newTestCache(t, CacheOptions[uint64, int]{MaxEntries: maxE, Seed: seed | 1})
	rng := rand.New(rand.NewPCG(seed, 9))
	var next uint64 = 1 << 40
	cur := s.pol.choice()
	for p := range 3 {
		for i := range phase {
			k := uint64(i % (2 * maxE))
			if p != 1 {
				next += uint64(rng.IntN(8) / 7)
				k = next - uint64(rng.IntN(maxE*3/4))
			}
			if _, ok := s.Get(k); !ok {
				s.Set(k, 0)
			}
			if c := s.pol.choice(); c != cur {
				polled = append(polled, rankings[c].name)
				cur = c
			}
		}
		if p == 1 {
			atLoop = s.Policy()
		}
	}
	return s.Policy(), polled, atLoop
}

// TestPolicyStateKeepsLastChanges checks the ring of changes: the last
// MaxPolicyChanges, oldest first, and the count of all.
func TestPolicyStateKeepsLastChanges(t *testing.T) {
	s := newTestCache(t, CacheOptions[uint64, int]{MaxEntries: 1024, Seed: 1})
	const n = MaxPolicyChanges + 9
	s.sh.mu.Lock()
	for i := range n {
		s.sh.log(PolicyChange{Kind: changeRanking, From: fmt.Sprint(i), To: fmt.Sprint(i + 1), Lead: 5})
	}
	s.sh.mu.Unlock()
	ps := s.Policy()
	if ps.ChangesTotal != n || len(ps.Changes) != MaxPolicyChanges {
		t.Fatalf("%d changes, %d listed; want %d and %d", ps.ChangesTotal, len(ps.Changes), n, MaxPolicyChanges)
	}
	for i, c := range ps.Changes {
		if want := fmt.Sprint(n - MaxPolicyChanges + i); c.From != want {
			t.Errorf("listed change %d is from %s, want %s", i, c.From, want)
		}
	}
}

// TestPolicyConcurrent reads the report while goroutines use the cache,
// for the race detector.
func TestPolicyConcurrent(t *testing.T) {
	// Under 2 × minShadow entries every key is sampled.
	s := newTestCache(t, CacheOptions[uint64, int]{MaxEntries: 256, Seed: 1})
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 50_000 {
				k := rng.Uint64N(4096)
				if _, ok := s.Get(k); !ok {
					s.Set(k, 1)
				}
			}
		})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			ps := s.Policy()
			if ps.SampleRate != 1 || len(ps.Miniatures) != numRankings {
				t.Errorf("sample rate %d, %d miniatures", ps.SampleRate, len(ps.Miniatures))
				return
			}
		}
	}()
	wg.Wait()
	<-done
	if ps := s.Policy(); ps.SampledGets == 0 || ps.SampledGets > 100_000 {
		t.Errorf("%d sampled Gets of 100,000 Gets on a cache that samples every key", ps.SampledGets)
	}
}

// A cache pinned to a ranking (CacheOptions.Ranking) starts with it and
// stays there on a workload that moves an unpinned cache away from it:
// on the drift of TestProbationTakesDrift, LRU pinned reports itself
// pinned, makes no change of ranking, and its miniatures show
// probation-window leading it past the bar on the way. Its hits are within half a
// point of a cache's whose ranking is forced before every Get (not equal:
// the forced cache's chooser still moves its twin and its prior's
// miniature to the rankings it would take, which steers its relocation
// and prior differently). Rankings lists the miniatures' names in their
// order; an unknown name is refused with ErrOptions; a pinned cache saved
// and opened with the option is pinned again.
func TestPolicyPinnedRanking(t *testing.T) {
	seed := seedFor(t)
	if got, ps := Rankings(), newTestCache(t, CacheOptions[uint64, int]{MaxEntries: 64, Seed: 1}).Policy(); len(got) != len(ps.Miniatures) {
		t.Fatalf("Rankings() = %v for %d miniatures", got, len(ps.Miniatures))
	} else {
		for i, m := range ps.Miniatures {
			if got[i] != m.Ranking {
				t.Errorf("Rankings()[%d] = %q, miniature %d is %q", i, got[i], i, m.Ranking)
			}
		}
	}
	for _, bad := range []string{"lru", "Recency", " recency"} {
		if _, err := NewCache(CacheOptions[uint64, int]{MaxEntries: 64, Ranking: bad}); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "probation-window") {
			t.Errorf("Ranking %q: error %v, want ErrOptions naming the rankings", bad, err)
		}
	}

	testutil.SkipOneGoroutine(t, "a pinned and a forced cache replay a drifting Zipf law")
	const maxE, total = 1024, 300_000
	const pin = "recency"
	pinned := newTestCache(t, CacheOptions[uint64, int]{MaxEntries: maxE, Seed: seed | 1, Ranking: pin})
	forced := newTestCache(t, CacheOptions[uint64, int]{MaxEntries: maxE, Seed: seed | 1})
	idx, err := rankingIndex(pin)
	if err != nil || pinned.Options().Ranking != pin {
		t.Fatalf("rankingIndex(%q) = %d, %v; Options().Ranking %q", pin, idx, err, pinned.Options().Ranking)
	}
	n := uint64(8 * maxE)
	draw := zipfDraw(t, 0.8, int(n), seed)
	hits, forcedHits := 0, 0
	var lead float64 // probation-window's highest lead, polled
	for i := range total {
		if i%5000 == 0 {
			for _, m := range pinned.Policy().Miniatures {
				if m.Ranking == "probation-window" {
					lead = max(lead, m.Lead)
				}
			}
		}
		k := uint64(i)/10 + n - 1 - draw()
		if _, ok := pinned.Get(k); ok {
			hits++
		} else {
			pinned.Set(k, 0)
		}
		forced.pol.w.Store(forced.pol.w.Load()&^0xff | uint32(idx))
		if _, ok := forced.Get(k); ok {
			forcedHits++
		} else {
			forced.Set(k, 0)
		}
	}
	ps := pinned.Policy()
	t.Logf("pinned to %s: %.2f%% hits, forced %.2f%%; probation-window leads by %.1f; changes %+v", pin, 100*float64(hits)/total, 100*float64(forcedHits)/total, lead, ps.Changes)
	if ps.Ranking != pin || !ps.Pinned || lead <= ps.Bar {
		t.Errorf("pinned to %s: reports %s, pinned %v, probation-window's highest lead %.1f (bar %.1f); want %s, true, past the bar", pin, ps.Ranking, ps.Pinned, lead, ps.Bar, pin)
	}
	for _, ch := range ps.Changes {
		if ch.Kind == "ranking" {
			t.Errorf("a pinned cache changed its ranking: %+v", ch)
		}
	}
	if d := math.Abs(float64(hits-forcedHits)) / total; d > 0.005 {
		t.Errorf("pinned to %s: %d hits; with the ranking forced before every Get, %d", pin, hits, forcedHits)
	}
	if free := newTestCache(t, CacheOptions[uint64, int]{MaxEntries: 64, Seed: 1}).Policy(); free.Pinned {
		t.Error("a cache without Ranking reports itself pinned")
	}

	path := filepath.Join(t.TempDir(), "pinned.db")
	if err := pinned.Save(path); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opts *CacheOptions[uint64, int]
		want string
	}{{nil, "patient"}, {&CacheOptions[uint64, int]{Ranking: "due"}, "due"}} {
		r, err := OpenCache(path, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if ps := r.Policy(); ps.Ranking != c.want || ps.Pinned != (c.opts != nil) {
			t.Errorf("opened with %+v: ranking %s, pinned %v; want %s, %v", c.opts, ps.Ranking, ps.Pinned, c.want, c.opts != nil)
		}
	}
	if _, err := OpenCache(path, &CacheOptions[uint64, int]{Ranking: "nonesuch"}); !errors.Is(err, ErrOptions) {
		t.Errorf("OpenCache with Ranking nonesuch: %v, want ErrOptions", err)
	}
}
