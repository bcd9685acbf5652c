package store

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/twochoice/twochoice/internal/testutil"
)

// TestCacheRunsItsMiniature checks the cache's policy against its
// miniature (shadow.go), which runs the same rankings on exact ticks of a
// single clock: replayed on the same requests at the same capacity, under
// each ranking, prior and relocation setting forced, the two hit alike. The requests come from a
// workload where the newest keys are the most requested, so that most
// hits land just after their key's insert, where a cache whose calls read
// its striped clock (clock.go) a little apart must not take the
// difference for an age of 2^20 units (ageOf).
func TestCacheRunsItsMiniature(t *testing.T) {
	testutil.SkipOneGoroutine(t, "a cache and a miniature replay the same requests")
	t.Parallel() // one goroutine of CPU work: it overlaps the other such tests
	seed := seedFor(t)
	const maxE, n = 4096, 200_000
	rng := rand.New(rand.NewPCG(seed, 11))
	draw := zipfDraw(t, 1.0, 50_000, seed)
	keys := make([]uint64, n)
	newest := uint64(50_000)
	for i := range keys {
		if rng.IntN(20) == 0 {
			newest++ // a new key, the most requested from now on
		}
		keys[i] = newest - draw()
	}
	for c := range numRankings {
		for pr := range numPriors {
			for _, move := range []bool{false, true} {
				s := newTestCache(t, CacheOptions[uint64, int]{MaxEntries: maxE, Seed: seed | 1})
				var m mini
				m.init(maxE, c, pr)
				m.move = move
				hits, miniHits := 0, 0
				for _, k := range keys {
					s.pol.w.Store(uint32(pr)<<8 | uint32(c))
					s.pol.moves.Store(move)
					if _, ok := s.Get(k); ok {
						hits++
					} else {
						s.Set(k, 0)
					}
					h := s.hash(k)
					b0 := uint64(uint32(h)) * m.half >> 32
					b1 := m.half + (h>>32)*m.half>>32
					if m.get(fingerprint(h), b0, b1) {
						miniHits++
					}
				}
				got, want := 100*float64(hits)/n, 100*float64(miniHits)/n
				t.Logf("ranking %d, prior %d, relocation %v: the cache hits %.2f%%, its miniature %.2f%%", c, pr, move, got, want)
				if got < want-0.5 || got > want+0.5 {
					t.Errorf("ranking %d, prior %d, relocation %v: the cache hits %.2f%% of the requests, a miniature of its size %.2f%%", c, pr, move, got, want)
				}
			}
		}
	}
}

// A move to another ranking restarts the twin (restartTwin): it becomes
// a relocating copy of the new ranking's miniature, under that ranking,
// and its duel starts from nothing, while the miniatures keep what they
// had.
func TestRankingMoveRestartsTwin(t *testing.T) {
	s, draw := zipfCache(t, 50_000)
	sh := s.sh
	cur := sh.pol.choice()
	to := (cur + 1) % numRankings
	if sh.twinDuel == (duel{}) || slices.Equal(sh.twin.keys, sh.minis[to].keys) {
		t.Fatalf("before the move: twin duel %+v, twin already a copy of ranking %d", sh.twinDuel, to)
	}
	before := append([]uint32(nil), sh.minis[to].keys...)
	// Give ranking to a lead past the bar over the one in use.
	sh.wins[to][cur], sh.wins[cur][to] = 100, 0
	sh.choose()
	if got := sh.pol.choice(); got != to {
		t.Fatalf("ranking %d after choose, want %d", got, to)
	}
	pr := sh.pol.prior()
	if !slices.Equal(sh.twin.keys, sh.minis[to].keys) || !slices.Equal(sh.twin.accs, sh.minis[to].accs) ||
		!slices.Equal(sh.twin.ghost, sh.minis[to].ghost) || sh.twin.tick != sh.minis[to].tick {
		t.Error("the twin is not a copy of the new ranking's miniature")
	}
	if !slices.Equal(sh.minis[to].keys, before) {
		t.Error("the move changed the new ranking's miniature")
	}
	if sh.twin.r != sh.rank(to, pr) || !sh.twin.move {
		t.Errorf("twin ranking %+v relocating %v, want %+v relocating", sh.twin.r, sh.twin.move, sh.rank(to, pr))
	}
	if sh.twinDuel != (duel{}) {
		t.Errorf("twin duel %+v after the move, want none", sh.twinDuel)
	}
	// The twin goes on as a miniature of its own: it relocates where the
	// ranking's does not, so the two part.
	sh.mu.Unlock()
	replayDraws(s, draw, 50_000)
	sh.mu.Lock()
	if slices.Equal(sh.twin.keys, sh.minis[sh.pol.choice()].keys) {
		t.Error("the twin did not part from the ranking's miniature")
	}
}

// A move restarts the comparison of the two rankings it is between, and
// only theirs: the old ranking then takes the cache back on a lead of its
// own after the move, without first undoing the lead that made it.
func TestRankingMoveRestartsItsComparison(t *testing.T) {
	s, _ := zipfCache(t, 20_000)
	sh := s.sh
	from := sh.pol.choice()
	to, other := (from+1)%numRankings, (from+2)%numRankings
	for i := range sh.wins {
		for j := range sh.wins[i] {
			sh.wins[i][j] = 0
		}
	}
	sh.wins[to][from], sh.wins[from][to] = 100, 10
	sh.wins[other][to], sh.wins[to][other] = 30, 20
	sh.choose()
	if got := sh.pol.choice(); got != to {
		t.Fatalf("ranking %d after choose, want %d", got, to)
	}
	if sh.wins[to][from] != 0 || sh.wins[from][to] != 0 {
		t.Errorf("after the move from %d to %d their counts are %v and %v, want both 0", from, to, sh.wins[to][from], sh.wins[from][to])
	}
	if want := 30 * shadowDecay; sh.wins[other][to] != want {
		t.Errorf("another ranking's count against the new one is %v after the move, want %v (kept and decayed)", sh.wins[other][to], want)
	}
	// A lead for the old ranking past the bar, gained after the move,
	// takes the cache back.
	sh.wins[from][to] += 20
	sh.choose()
	if got := sh.pol.choice(); got != from {
		t.Errorf("ranking %d after the old one led by 20 wins to none, want %d", got, from)
	}
}

// The long memory moves the cache back to a ranking it has used, on a
// lead too small for the short memory to clear the bar, if the short
// memory leans the same way; it moves the cache to no ranking it has not
// used, and to none the short memory has trailing.
func TestLongMemoryMovesBackOnly(t *testing.T) {
	s, _ := zipfCache(t, 20_000)
	sh := s.sh
	forget := func() {
		sh.wins, sh.longWins = [numRankings][numRankings]float64{}, [numRankings][numRankings]float64{}
		sh.altDuel = duel{}
	}
	forget()
	from := sh.pol.choice()
	to, other := (from+1)%numRankings, (from+2)%numRankings
	sh.visited = 1 << from
	sh.wins[to][from], sh.wins[from][to] = 100, 10
	sh.choose()
	if sh.pol.choice() != to || sh.visited != 1<<from|1<<to {
		t.Fatalf("ranking %d after a short lead, used %b; want %d", sh.pol.choice(), sh.visited, to)
	}
	// A long lead past the bar (150 of 1,050, 4.6 standard deviations)
	// for a ranking the cache has not used, and for the one it left
	// while the short memory has it trailing: no move.
	forget()
	sh.longWins[other][to], sh.longWins[to][other] = 600, 450
	sh.wins[other][to], sh.wins[to][other] = 12, 10
	sh.longWins[from][to], sh.longWins[to][from] = 600, 450
	sh.wins[from][to], sh.wins[to][from] = 10, 12
	sh.choose()
	if got := sh.pol.choice(); got != to {
		t.Fatalf("ranking %d after long leads the long memory may not act on, want %d", got, to)
	}
	// The same long lead for the ranking it left, with the short memory
	// leaning its way (0.4 standard deviations): the cache moves back, and
	// the pair's counts start again.
	forget()
	sh.longWins[from][to], sh.longWins[to][from] = 600, 450
	sh.wins[from][to], sh.wins[to][from] = 12, 10
	sh.choose()
	if got := sh.pol.choice(); got != from {
		t.Fatalf("ranking %d after the ranking it left led the long memory, want %d", got, from)
	}
	if sh.longWins[from][to] != 0 || sh.longWins[to][from] != 0 || sh.wins[from][to] != 0 {
		t.Errorf("after the move back the pair's counts are %v, %v (long) and %v (short), want 0", sh.longWins[from][to], sh.longWins[to][from], sh.wins[from][to])
	}
	if c := sh.changeLog[(sh.changes-1)%MaxPolicyChanges]; c.Kind != changeRanking || c.To != rankings[from].name || math.Abs(c.Lead-150/math.Sqrt(1050)) > 1e-9 {
		t.Errorf("the move back is logged as %+v", c)
	}
}

// zipfCache returns a cache of 1,024 entries (hash seed from seedFor)
// that has replayed n draws of Zipf 0.9 over 20,000 keys, and the draw,
// to go on with. The cache's shadows are returned locked, and unlocked
// when the test ends: a test that replays more draws unlocks them for it.
func zipfCache(t *testing.T, n int) (*Cache[uint64, int], func() uint64) {
	seed := seedFor(t)
	s := newTestCache(t, CacheOptions[uint64, int]{MaxEntries: 1024, Seed: seed | 1})
	draw := zipfDraw(t, 0.9, 20_000, seed)
	replayDraws(s, draw, n)
	s.sh.mu.Lock()
	t.Cleanup(s.sh.mu.Unlock)
	return s, draw
}

// replayDraws replays n keys of draw on s, a Get that misses setting its
// key, as a cache in front of a slower store is used.
func replayDraws(s *Cache[uint64, int], draw func() uint64, n int) {
	for range n {
		if k := draw(); !has(s, k) {
			s.Set(k, 0)
		}
	}
}

// has reports whether a Get of k hits.
func has(s *Cache[uint64, int], k uint64) bool {
	_, ok := s.Get(k)
	return ok
}
