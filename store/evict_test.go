package store

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"

	"github.com/twochoice/twochoice/internal/testutil"
)

// evictConfigs are a few cache configurations, one per kind of candidate
// set: one choice, d-choice, go-left (parts), double hashing and d > 2.
func evictConfigs(maxE int) []Options {
	return []Options{
		{Placement: bucket.OneChoice, Choices: 1, MaxEntries: maxE},
		{Placement: bucket.DChoice, Choices: 2, MaxEntries: maxE},
		{Placement: bucket.GoLeft, Choices: 2, MaxEntries: maxE},
		{Placement: bucket.DoubleHash, Choices: 2, MaxEntries: maxE},
		{Placement: bucket.DChoice, Choices: 3, BucketSize: 4, MaxEntries: maxE},
	}
}

// forEvictConfigs runs fn as a subtest, named after its options, for each
// of evictConfigs(maxE) with the given seed.
func forEvictConfigs(t *testing.T, maxE int, seed uint64, fn func(t *testing.T, o Options)) {
	for _, o := range evictConfigs(maxE) {
		o.Seed = seed
		t.Run(name(o), func(t *testing.T) { fn(t, o) })
	}
}

// withFakeClock gives o a fake clock of its own, and returns it.
func withFakeClock(o *Options) *fakeClock {
	clk := newFakeClock()
	o.Clock = clk
	return clk
}

// TestEvictionTakesTheOldest: keys that are set once and never read have
// no frequency to tell them apart, so under a ranking that reads age as
// disuse (frequency, pinned here: the shadows would move a cache that
// only inserts to a ranking that keeps a stable subset, as for a scan)
// the victim is the candidates' least recently set entry. Of a stream of distinct keys through a cache, the
// most recent ones must then all still be there: one set within the last
// tenth of the cache's capacity is evicted only if it is the oldest of all
// its candidates' slots, which takes the sketch's false positives giving
// older entries a bonus: with one choice (8 slots) a key or two in a
// hundred, in 1 run in 7; an eviction of the newest entry instead loses a
// third of them, and passes every read-your-writes check, since a Set
// never evicts its own key.
func TestEvictionTakesTheOldest(t *testing.T) {
	seed := seedFor(t)
	const maxE = 1000
	forEvictConfigs(t, maxE, seed, func(t *testing.T, o Options) {
		s := newTestCacheOf[uint64, int](t, o)
		s.pol.set(rankingFrequency)
		s.sh.period = math.MaxInt
		rng := rand.New(rand.NewPCG(seed, 2))
		keys := make([]uint64, 8*maxE)
		for i := range keys {
			keys[i] = rng.Uint64()
			s.Set(keys[i], i)
		}
		held := s.present()
		recent := keys[len(keys)-maxE/10:]
		lost := 0
		for _, k := range recent {
			if _, ok := held[k]; !ok {
				lost++
			}
		}
		if lost > len(recent)/10 {
			t.Fatalf("%d of the %d most recently set keys were evicted", lost, len(recent))
		}
		// And the oldest keys are gone: only entries hit since could
		// have outlived 7 capacities' worth of inserts, and entries that
		// the ghost gave a gap when they were set, taking them for an
		// evicted key whose fingerprint they share (1 in 255 of the
		// ghost's collisions): those have a gap, and are few.
		mistaken := 0
		for _, k := range keys[:maxE] {
			if _, ok := held[k]; !ok {
				continue
			}
			if gapCodeOf(s.wordOf(k)) == noGap {
				t.Fatalf("key %d, set first and never read, outlived %d inserts into a cache of %d", k, len(keys)-maxE, maxE)
			}
			mistaken++
		}
		if mistaken > maxE/100 {
			t.Fatalf("%d of the %d keys set first outlived %d inserts with a gap the ghost gave them", mistaken, maxE, len(keys)-maxE)
		}
		if mistaken > 0 {
			t.Logf("%d of the keys set first outlived the others with a gap the ghost gave them", mistaken)
		}
	})
}

// TestExpiredAtExactlyNowIsAVictim: an entry whose expiry is exactly the
// clock's time has expired (Get misses it), so a new key that needs room
// must take its slot as an expiration, not evict a live entry.
func TestExpiredAtExactlyNowIsAVictim(t *testing.T) {
	forEvictConfigs(t, 64, 11, func(t *testing.T, o Options) {
		clk := withFakeClock(&o)
		s := newTestCacheOf[int, int](t, o)
		// The clock stands still: every entry expires at the same
		// instant, and the cache ends full.
		for k := range 4 * o.MaxEntries {
			s.SetWithTTL(k, k, time.Second)
		}
		if s.Len() != o.MaxEntries {
			t.Fatalf("Len %d after filling, want %d", s.Len(), o.MaxEntries)
		}
		clk.advance(time.Second) // now == every entry's expiry
		before := s.Stats()
		const inserts = 10
		for k := range inserts {
			s.Set(-1-k, k)
		}
		after := s.Stats()
		if ev, ex := after.Evictions-before.Evictions, after.Expirations-before.Expirations; ev != 0 || ex != inserts {
			t.Fatalf("%d new keys into a full cache of entries expiring now: %d evictions, %d expirations; want 0 and %d",
				inserts, ev, ex, inserts)
		}
	})
}

// holds reports whether a cache's table holds k (expired or not), looking
// only in k's candidates: cheaper than present for one key.
func (s *Cache[K, V]) holds(k K) bool {
	t := s.tab.Load()
	h := s.hash(k)
	var c [hashfn.MaxChoices]uint64
	for _, i := range t.cands(h, &c) {
		if t.bucket(i).find(k, tagOf(h)) >= 0 {
			return true
		}
	}
	return false
}

// TestGhostRemembersEvictedKeys: a key evicted after hits that showed a
// short reuse gap leaves that gap in the ghost, so that it comes back with
// a gap far below a one-off's; a key the ghost does not know comes in with
// no gap.
func TestGhostRemembersEvictedKeys(t *testing.T) {
	testutil.SkipOneGoroutine(t, "one-off keys evict a hot key")
	t.Parallel() // one goroutine of CPU work: it overlaps the other such tests
	seed := seedFor(t)
	const maxE = 4096
	forEvictConfigs(t, maxE, seed, func(t *testing.T, o Options) {
		s := newTestCacheOf[uint64, int](t, o)
		rng := rand.New(rand.NewPCG(seed, 4))
		const hot = 1 << 63
		s.Set(hot, 0)
		// Hits a few inserts apart: a gap of a handful of ticks.
		for i := range 40 {
			s.Set(rng.Uint64()>>1, i)
			if _, ok := s.Get(hot); !ok {
				t.Fatal("the hot key missed at once")
			}
		}
		g0 := gapOf(s.wordOf(hot))
		if g0 > uint32(maxE)>>s.tq {
			t.Fatalf("after 40 hits a few inserts apart, the hot key's gap is %d units", g0)
		}
		for i := range 64 * maxE {
			s.Set(rng.Uint64()>>1, i) // one-offs, never the hot key
			if s.holds(hot) {
				continue
			}
			// Evicted once its age passed the one-offs' gap (max(g, age)).
			w, _ := s.tab.Load().gh.spot(s.hash(hot))
			word := w.Load()
			now := s.tickNow(0)
			g, age, ok := s.tab.Load().gh.take(s.hash(hot), now)
			if !ok {
				t.Fatalf("evicted after %d inserts, the hot key left nothing in the ghost", i+1)
			}
			if gapValue[g] != g0 || age < 4*maxE>>s.tq {
				t.Fatalf("the ghost holds gap %d and age %d units; the key had gap %d and was evicted %d inserts in", gapValue[g], age, g0, i+1)
			}
			// Back with its gap moved by the time since its last use.
			w.Store(word)
			want := gapValue[gapCode(blendGap(g0, age, s.pol.current().shift))]
			s.Set(hot, 1)
			if g := gapOf(s.wordOf(hot)); g != want {
				t.Fatalf("back from the ghost with gap %d, want %d", g, want)
			}
			// A new key that the ghost does not know, not even by a
			// chance match of its 8-bit check (1 in 255 of the spots
			// that hold a word): such a match is the ghost's false
			// positive, which it allows, not a fault.
			one := rng.Uint64() >> 1
			for {
				w, fp := s.tab.Load().gh.spot(s.hash(one))
				if x := w.Load(); x == 0 || x>>24 != fp {
					break
				}
				one = rng.Uint64() >> 1
			}
			s.Set(one, 2)
			if c := gapCodeOf(s.wordOf(one)); s.holds(one) && c != noGap {
				t.Fatalf("a key the ghost does not know has gap code %d, want none (%d)", c, noGap)
			}
			return
		}
		t.Fatalf("the hot key outlived %d one-off keys", 64*maxE)
	})
}

// wordOf returns the policy word of k, which the cache holds.
func (s *Cache[K, V]) wordOf(k K) uint32 {
	t := s.tab.Load()
	h := t.hash(k)
	var c [hashfn.MaxChoices]uint64
	for _, i := range t.cands(h, &c) {
		if j := t.bucket(i).find(k, tagOf(h)); j >= 0 {
			return t.cbucket(i).acc[j].Load()
		}
	}
	return 0
}

// TestCacheEvictsOnlyWhenCandidatesFull: a new key takes a free slot if
// any of its candidates has one, and evicts only when all are full; a
// bucket with one slot short of the rest (cacheSize) counts as full when
// its slots are. MaxEntries 101 leaves short buckets in every rule.
func TestCacheEvictsOnlyWhenCandidatesFull(t *testing.T) {
	seed := seedFor(t)
	forEvictConfigs(t, 101, seed, func(t *testing.T, o Options) {
		s := newTestCacheOf[uint64, int](t, o)
		tb := s.tab.Load()
		if tb.short == 0 {
			t.Fatalf("no short bucket: %d buckets of %d slots", tb.n, tb.size)
		}
		rng := rand.New(rand.NewPCG(seed, 5))
		for i := range 20 * o.MaxEntries {
			k := rng.Uint64()
			var c [hashfn.MaxChoices]uint64
			room := false
			for _, b := range tb.cands(s.hash(k), &c) {
				if int(tb.load(b)) < slotsOf(tb.capAt(b)) {
					room = true
				}
			}
			before := s.Stats().Evictions
			s.Set(k, i)
			if ev := s.Stats().Evictions - before; room && ev != 0 {
				t.Fatalf("insert %d: evicted an entry while a candidate of the new key had a free slot", i)
			}
		}
	})
}

// The policy word's fields, the gap codes, the blending of gaps, the
// scores of λ = 0, 1 and 2.5, and the wrap that evict.go documents: ages
// mod 2^20 units, but for a word up to maxLag units ahead of now, whose
// age is 0 (ageOf), in the policy word and in the ghost's.
func TestPolicyWord(t *testing.T) {
	w := packGap(5, 3)
	if w&liveBit == 0 || gapOf(w) != 3 {
		t.Fatalf("packGap(5, 3) = %#x: want the live bit and gap 3", w)
	}
	for _, c := range []struct {
		now  uint64
		want uint32
	}{
		{5, 0}, {9, 4}, {tickMask + 5 - maxLag, tickMask - maxLag}, {tickMask + 6, 0}, {1<<40 + 9, 4},
		{4, 0}, {tickMask + 6 - maxLag, 0}, {tickMask + 5, 0}, // stamped up to maxLag ahead of now
	} {
		if got := ageOf(w, c.now); got != c.want {
			t.Errorf("ageOf(tick 5, now %d) = %d, want %d", c.now, got, c.want)
		}
	}
	for _, shift := range []uint8{0, 3, 12} {
		at := uint64(1<<30 + 5<<shift)
		x := ghostWord(packGap(at, 3), at, shift, 7)
		for _, c := range []struct {
			now  uint64
			want uint32
		}{{at, 0}, {at + 9<<shift, 9 << shift}, {at - 1, 0}, {at - maxLag, 0}, {at + 0xffff<<shift - maxLag - 2<<shift, 0xffff<<shift - maxLag - 2<<shift}} {
			if g, age := ghostRead(x, c.now, shift); g != 3 || age != c.want {
				t.Errorf("ghost unit 2^%d: a word of tick %d read at %d: gap code %d, age %d; want 3, %d", shift, at, c.now, g, age, c.want)
			}
		}
	}
	// Every code decodes to the largest coded gap not above it, exact
	// below 16 and within 12.5% above.
	for c := range 256 {
		v := gapValue[c]
		if gapCode(v) != uint8(c) && v != gapValue[255] {
			t.Errorf("gapCode(gapValue[%d] = %d) = %d", c, v, gapCode(v))
		}
		if c > 0 && v <= gapValue[c-1] && v != gapValue[255] {
			t.Errorf("gap codes not increasing at %d: %d after %d", c, v, gapValue[c-1])
		}
	}
	for _, x := range []uint32{0, 7, 15, 16, 17, 100, 1000, 123456, 1 << 31, 1<<32 - 1} {
		v := gapValue[gapCode(x)]
		if v > x || x < 16 && v != x || float64(v) < float64(x)/1.125 {
			t.Errorf("gapCode(%d) decodes to %d", x, v)
		}
	}
	// A use moves the gap half way (α = 1/2) or a quarter (1/4) to the gap
	// seen, or all the way (α = 1), and stamps the tick; a key without a
	// gap moves from firstGap, whatever gap the ranking scores newcomers
	// with.
	half, quarter, last := rank{shift: 1, newGap: 1000, firstGap: 400}, rank{shift: 2}, rank{shift: 0}
	g := packGap(100, gapCode(96))
	if a := half.accessed(g, 100+32); gapOf(a) != 64 || ageOf(a, 132) != 0 {
		t.Errorf("accessed(gap 96, seen 32, α 1/2) = gap %d, age %d; want 64, 0", gapOf(a), ageOf(a, 132))
	}
	if a := quarter.accessed(g, 100+32); gapOf(a) != gapValue[gapCode(80)] {
		t.Errorf("accessed(gap 96, seen 32, α 1/4) = gap %d, want %d", gapOf(a), gapValue[gapCode(80)])
	}
	if a := last.accessed(g, 100+32); gapOf(a) != 32 {
		t.Errorf("accessed(gap 96, seen 32, α 1) = gap %d, want 32", gapOf(a))
	}
	if a := half.accessed(packGap(0, gapCode(16)), 200); gapOf(a) != gapValue[gapCode(108)] {
		t.Errorf("accessed(gap 16, seen 200, α 1/2) = gap %d, want %d", gapOf(a), gapValue[gapCode(108)])
	}
	if a := half.accessed(packGap(0, noGap), 200); gapOf(a) != gapValue[gapCode(300)] {
		t.Errorf("accessed(no gap, seen 200, α 1/2, first gap 400) = gap %d, want %d", gapOf(a), gapValue[gapCode(300)])
	}
	// Which of two entries goes, at now = 1000, under each λ. p (gap 512,
	// used at 500) is due in 12, q (gap 400, used now) in 400: λ = 0
	// takes q, due last; λ = 1 and 2.5 take p, the larger gap. r (gap 512,
	// used now) against u (gap 300, used at 710, near its gap): λ = 0 and
	// 1 take r, λ = 2.5 u, the older for its gap. c (gap 16, used at 100,
	// long overdue) goes before b (gap 512, used at 999) under every λ.
	word := func(gap uint32, last uint64) uint32 { return packGap(last, gapCode(gap)) }
	for _, c := range []struct {
		x, y uint32
		want [3]string
	}{
		{word(512, 500), word(400, 1000), [3]string{"y", "x", "x"}},
		{word(512, 1000), word(300, 710), [3]string{"x", "x", "y"}},
		{word(16, 100), word(512, 999), [3]string{"x", "x", "x"}},
	} {
		for l, want := range c.want {
			r := ranking{m4: [3]int64{4, 0, -6}[l]}.in(1000, shortPrior)
			sx, _ := r.score(c.x, 1000)
			sy, _ := r.score(c.y, 1000)
			if got := map[bool]string{true: "x", false: "y"}[sx > sy]; got != want {
				t.Errorf("(1−λ) = %d/4: x scores %d, y %d: %s goes, want %s", r.m4, sx, sy, got, want)
			}
		}
	}
	if !fresh(packGap(5, 3), 5+3, 4) || fresh(packGap(5, 3), 5+4, 4) || fresh(packGap(5, 8), 5, 4) {
		t.Errorf("fresh: want true only under the slack, with a gap under twice it")
	}
	for _, c := range []struct {
		max  int
		unit uint8
	}{{1, 0}, {511, 0}, {1023, 0}, {1024, 1}, {2000, 1}, {100_000, 7}, {1 << 20, 11}} {
		slack := recencySlack(c.max)
		if got := tickUnit(c.max); got != c.unit || slack >= 2 && 2<<got > slack {
			t.Errorf("tickUnit(%d) = %d, want %d (slack %d)", c.max, got, c.unit, recencySlack(c.max))
		}
	}
}

// The last-gap field: a last gap of at most 2^3 and at least 2^-4 times g
// reads back within the rounding of a power of two (a factor of √2, and
// of the gap codes' eighth), exactly when its code is g's moved by a
// multiple of eight (a power of two), and as g itself when it is g; one further out reads as the nearest
// end of that range. A ranking of α = 1 then reads the last gap of a word
// another ranking wrote as it reads its own word of the same history, to
// within that rounding, and a ranking of α = 1/2 still reads the mean. Words whose gap field
// held the mean alone, as before the last-gap field, fail the second
// part: a key that "patient" saw used twice has a mean of several
// capacities, which "probation" scores as a key on probation and
// "due-last-gap" as one due capacities later.
func TestLastGapField(t *testing.T) {
	for c := 0; c < noGap; c++ {
		for l := 0; l < noGap; l++ {
			w := packAcc(0, uint8(c), lastStep(uint8(l), uint8(c)))
			got := lastGapOf(w, uint8(c))
			lo := min(max(l, c-32), c+24) // the code of the range's nearest end
			want := float64(gapValue[lo])
			// Below code 16, where codes are the gaps themselves rather
			// than their logarithms, the reading is off by up to 16 units
			// more (a 32nd of a capacity at the least; tickUnit).
			slack := 0.0
			if c < 16 || lo < 16 {
				slack = 16
			}
			if l == c && got != gapValue[c] || c >= 16 && lo >= 16 && (l-c)%8 == 0 && got != uint32(want) ||
				float64(got) > want*1.5+slack || float64(got) < want/1.5-slack {
				t.Fatalf("gap code %d, last gap code %d (%d): reads back %d", c, l, gapValue[l], got)
			}
		}
	}
	const capUnits = 1000
	patient := rankings[defaultRanking].in(capUnits, shortPrior)
	for _, name := range []string{"due-last-gap", "probation", "probation-window"} {
		i, err := rankingIndex(name)
		if err != nil {
			t.Fatal(err)
		}
		r := rankings[i].in(capUnits, shortPrior)
		// The same history under each ranking: inserted at 0, used at
		// 3000 and at 3800 (a last gap of 800 units, four fifths of a
		// capacity, which "patient" blends into a mean of 2,816), read at
		// 4100.
		theirs := patient.accessed(patient.accessed(packGap(0, noGap), 3000), 3800)
		own := r.accessed(r.accessed(packGap(0, noGap), 3000), 3800)
		if gapOf(theirs) < 2*capUnits {
			t.Fatalf("patient's mean after gaps of 3000 and 800 is %d, want capacities: the prior blended in", gapOf(theirs))
		}
		sc, age := r.score(theirs, 4100)
		want, wantAge := r.score(own, 4100)
		if name == "due-last-gap" {
			// Its gap, read in steps of a power of two from patient's
			// mean, is 704 rather than 768: a score 4·(768−704) lower.
			want -= 4 * 64
		}
		if sc != want || age != wantAge {
			t.Errorf("%s scores patient's word %d (age %d), want %d (age %d)", name, sc, age, want, wantAge)
		}
	}
	// "patient" reads its mean, not the last gap.
	withLast := patient.accessed(patient.accessed(packGap(0, noGap), 3000), 3800)
	a, _ := patient.score(withLast, 4100)
	b, _ := patient.score(packGap(3800, gapCodeOf(withLast)), 4100)
	if a != b {
		t.Errorf("patient scores a word by its last gap: %d against %d for the same mean", a, b)
	}
}

// TestProbationScore checks the probation ranking's scores (ranking.go)
// in a cache whose capacity takes 1,000 tick units: a key whose last gap
// is at most a capacity is protected and ranked by age alone, below any
// key on probation that is not older than the newcomer gap; a key whose
// gap is longer scores as a newcomer does; on either side the older goes
// first; and LRU ("recency") still ranks every key by age alone.
// "probation-window" scores every key as probation does but for a
// newcomer younger than a quarter of the capacity, which it keeps.
func TestProbationScore(t *testing.T) {
	var prob, win, lru rank
	for _, r := range rankings {
		switch r.name {
		case "probation":
			prob = r.in(1000, shortPrior)
		case "probation-window":
			win = r.in(1000, shortPrior)
		case "recency":
			lru = r.in(1000, shortPrior)
		}
	}
	if win.window != 250 || win.cut != prob.cut || win.newGap != prob.newGap {
		t.Fatalf("probation-window's window %d, cut %d and newcomer gap %d; want 250, %d and %d", win.window, win.cut, win.newGap, prob.cut, prob.newGap)
	}
	if prob.cut != 1000 || prob.newGap != 8000 {
		t.Fatalf("probation's cut %d and newcomer gap %d, want 1000 and 8000", prob.cut, prob.newGap)
	}
	const now = 20_000
	word := func(gap uint32, last uint64) uint32 { return packGap(last, gapCode(gap)) }
	score := func(r *rank, w uint32) int64 { s, _ := r.score(w, now); return s }
	protected, protectedOld := word(1000, now-500), word(900, now-3000)
	onProbation, newcomer := word(1100, now-10), packGap(now-10, noGap)
	if got, want := score(&prob, protected), int64(4*500); got != want {
		t.Errorf("a protected key 500 units old scores %d, want %d (its age alone)", got, want)
	}
	if score(&prob, protectedOld) <= score(&prob, protected) {
		t.Errorf("the older protected key scores %d, the younger %d: want the older above", score(&prob, protectedOld), score(&prob, protected))
	}
	if score(&prob, onProbation) != score(&prob, newcomer) {
		t.Errorf("a key whose gap is past the cut scores %d, a newcomer of its age %d: want equal", score(&prob, onProbation), score(&prob, newcomer))
	}
	if score(&prob, onProbation) <= score(&prob, protectedOld) {
		t.Errorf("a key on probation 10 units old scores %d, a protected one 3,000 old %d: want probation to go first", score(&prob, onProbation), score(&prob, protectedOld))
	}
	if a, b := score(&prob, word(5000, now-9000)), score(&prob, word(5000, now-8500)); a <= b {
		t.Errorf("keys on probation past the newcomer gap: the older scores %d, the younger %d", a, b)
	}
	if s, age := prob.score(newcomer, now); s != 4*8000 || age != 10 {
		t.Errorf("a newcomer 10 units old scores %d (age %d), want %d: no window", s, age, 4*8000)
	}
	for _, w := range []uint32{protected, protectedOld, onProbation, word(5000, now-9000), packGap(now-300, noGap)} {
		if a, b := score(&win, w), score(&prob, w); a != b {
			t.Errorf("a word of age %d: probation-window scores it %d, probation %d; want equal out of the window", ageOf(w, now), a, b)
		}
	}
	young, older := score(&win, newcomer), score(&win, packGap(now-200, noGap))
	if young >= 0 || older >= 0 || older <= young || older >= score(&win, protected) {
		t.Errorf("newcomers 10 and 200 units old score %d and %d under probation-window; want both below 0, the older above the younger, and below a protected key's %d",
			young, older, score(&win, protected))
	}
	for _, w := range []uint32{protected, onProbation, newcomer, word(5000, now-9000)} {
		if s, age := lru.score(w, now); s != 4*int64(age) {
			t.Errorf("LRU scores a word of age %d at %d, want its age alone", age, s)
		}
	}
}

// A cache bucket's header (policy words, control word, sync word) is the
// 48 bytes bucket.go describes: on one cache line whenever the bucket
// starts at byte 0 or 16 of a line. An unbounded store's bucket has a
// 16-byte header.
func TestBucketHeader(t *testing.T) {
	var cb cacheBucket[string, int64]
	if off := unsafe.Offsetof(cb.b) + unsafe.Offsetof(cb.b.slots); off != 48 {
		t.Fatalf("the slots start at byte %d of a cache bucket, want 48", off)
	}
	if off := unsafe.Offsetof(cb.b.ctrl); off != 0 || unsafe.Offsetof(cb.b) != 32 {
		t.Fatalf("the control word is at byte %d of the bucket, %d of the cache bucket; want 0 and 32", off, unsafe.Offsetof(cb.b))
	}
	if off := unsafe.Offsetof(cb.b.slots); off != 16 {
		t.Fatalf("the slots start at byte %d of a bucket, want 16", off)
	}
}

// TestCachePrefetch: a cache whose buckets pass a core's L2 prefetches
// its candidates' lines on a Get and a Set (bigCacheTable); a small one
// does not, and neither does a build without the prefetch's assembly.
func TestCachePrefetch(t *testing.T) {
	for _, c := range []struct {
		max  int
		want bool
	}{
		{1 << 20 / 10, havePrefetch}, // 13,108 buckets of 240 bytes: 3 MiB
		{1 << 20 / 100, false},       // 0.3 MiB
		{1 << 10, false},
	} {
		s, err := NewCache(CacheOptions[string, int64]{Seed: 1, MaxEntries: c.max})
		if err != nil {
			t.Fatal(err)
		}
		// The final table: the one that holds the bound.
		sizes := cacheSizes(&s.cfg)
		tb := newCacheTable[string, int64](&s.cfg, s.lay, sizes[len(sizes)-1], s.tq)
		bytes := tb.n * uint64(unsafe.Sizeof(cacheBucket[string, int64]{}))
		if tb.prefetch != c.want {
			t.Errorf("MaxEntries %d (%d bytes of buckets): prefetch %v, want %v", c.max, bytes, tb.prefetch, c.want)
		}
	}
}

// TestMapPrefetch: a map whose slots pass a core's L2 prefetches its
// candidates' slots on a Get and a Set (bigMapTable), from the table a
// size hint makes or the one growth reaches; a small one does not, and
// neither does a build without the prefetch's assembly.
func TestMapPrefetch(t *testing.T) {
	for _, c := range []struct {
		hint int
		want bool
	}{
		{1 << 20, havePrefetch}, // 192-byte buckets for a million keys: about 30 MiB
		{1 << 12, false},        // about 0.1 MiB
		{0, false},
	} {
		s, err := NewMap[string, int64](MapOptions{Seed: 1, SizeHint: c.hint})
		if err != nil {
			t.Fatal(err)
		}
		tb := s.tabs.Load().cur
		bytes := tb.n * uint64(unsafe.Sizeof(group[string, int64]{}))
		if tb.prefetch != c.want {
			t.Errorf("SizeHint %d (%d bytes of slots): prefetch %v, want %v", c.hint, bytes, tb.prefetch, c.want)
		}
	}
	// Growth reaches a table past the bound (2^17 int→int entries in
	// buckets of 128 bytes of slots: over 2 MiB), which prefetches.
	s, err := NewMap[int, int](MapOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1 << 17 {
		s.Set(i, i)
	}
	for s.tabs.Load().old != nil {
		s.Set(0, 0) // each write moves a few buckets
	}
	tb := s.tabs.Load().cur
	if bytes := tb.n * uint64(unsafe.Sizeof(group[int, int]{})); tb.prefetch != havePrefetch || bytes < 2<<20 {
		t.Errorf("after growth to %d bytes of slots: prefetch %v, want %v", bytes, tb.prefetch, havePrefetch)
	}
}
