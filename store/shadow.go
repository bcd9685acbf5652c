package store

import (
	"math"
	"math/bits"
	"sync"

	"github.com/twochoice/twochoice/hashfn"
)

// Shadows choose the ranking a cache evicts by (ranking.go) while it runs,
// by miniature simulation (Waldspurger, Saemundsson, Ahmad and Park,
// "Cache Modeling and Optimization using Miniature Simulations", USENIX
// ATC 2017): the keys whose hash has sampleBits zero bits at shadowBit
// form a sample, 1 in rate of the keys, and their Gets are replayed, as
// they come, on one miniature cache per ranking, each of capacity/rate
// entries, a Get that misses inserting its key as a cache in front of a
// slower store does (a hit ratio is about Gets; Sets, whose keys a Get
// that missed usually brings, are not replayed, so they cost nothing
// here). A sample of the keys (not of the requests) keeps every sampled
// key's whole history, so each miniature sees the reuse pattern of the
// workload at a scale where its hit ratio tracks the full cache's (the
// SHARDS property).
//
// The miniatures see the same requests, so they are compared pairwise on
// the requests where they differ: wins[i][j] counts the sampled Gets that
// ranking i's miniature hit and j's missed. Every period sampled Gets, the
// counts are decayed by shadowDecay (a memory of some 75 periods), and
// the cache moves from ranking c to the ranking i with the largest
//
//	z = (wins[i][c] − wins[c][i]) / √(wins[i][c] + wins[c][i]),
//
// if z > zSwitch: McNemar's test, the lead of i over c on the requests
// where they differ in standard deviations of a fair coin's. A move is
// not free: the cache's entries were chosen by the ranking it leaves, and
// the one it takes has to undo what it disagrees with, so two rankings
// about as good as each other are not swapped back and forth on the
// miniatures' noise, while one that does clearly better takes over within
// a few periods (a loop over twice the cache moves it in under a capacity
// of inserts: adapt_test.go). Until a ranking clears the bar the cache
// keeps the one it starts with (defaultRanking). The starting ranking
// gets no lower bar than the others: leaving it on a lead of 2.5, or
// taking the miniatures' leader once they are warm, moves sooner on the
// short traces, but bench --corpus lost 0.72 and 1.66 points in sum over
// its 48 trace rows, and the second lost 2.71 over its 8 Zipf rows
// (zipf:0.6 at 1% −2.1).
//
// A move spends the evidence it was made on: the counts between the
// ranking the cache leaves and the one it takes start again from nothing,
// as a sequential test restarts once it has been acted on. Kept, they
// held the lead that made the move, often gained in a phase of the
// workload that then ended, and moving back waited until that lead had
// decayed and a lead of the other sign had grown past the bar, which on
// a short trace never came. With the restart, the evidence for moving
// back is what the two miniatures show after the move; the bar stays
// where it is, so two rankings that tie are no more likely to be swapped
// than before. The other pairs keep their counts. Over the medians of
// three hash seeds, bench --corpus moved by +1.12 points in sum over its
// 48 trace rows (lirs/ps at 1% +0.85, lirs/sprite at 1% +0.22, no row
// lower by more than 0.09), +0.37 over synthetic:all at 20,000 keys
// (phases at 5% +0.23), and by nothing over synthetic:all at its default
// million keys, its 8 Zipf rows and 12 aging rows.
//
// The rate is the largest power of two that leaves the miniatures at
// least minShadow entries, so a cache of fewer than 2 × minShadow entries
// replays every Get on its miniatures, which costs it about as much as the
// Gets themselves (numRankings small caches). A larger one pays for the
// replay on 1 in rate of its Gets. Smaller miniatures are not only noisier
// but biased: a gap measured in a miniature's own inserts is a count of
// sampled keys, rate times noisier than the cache's, which handicaps the
// rankings that use gaps against the one that does not (on OLTP at 10%,
// miniatures of 300 entries prefer LRU, which does 1 point worse there
// than the ranking that miniatures of the cache's whole size choose).
// Miniatures twice as large (minShadow 512, twice the replay and the
// memory) are no cure: bench --corpus moved by −0.11 points in sum over
// its 48 trace rows, −2.23 over its 8 Zipf rows (zipf:0.8 at 1% −1.55),
// +1.23 over its 12 aging rows and −0.43 over the 24 rows of
// synthetic:all at 20,000 keys. Nor is timing the miniatures' gaps on the
// cache's own clock (its inserts over the sampling rate) instead of their
// own inserts, which takes the sampling noise out of the gaps but gives
// every challenger the clock of the ranking in use: over the medians of
// three hash seeds, bench --corpus moved by +0.44 points in sum over its 48
// trace rows (no row across the half-point line), −2.23 over the 24 rows
// of synthetic:all at its default million keys and +0.01 over its 8 Zipf
// rows. A sampled call takes the shadows' mutex with TryLock and skips the replay
// when another call holds it, so no call waits for the shadows: under
// contention a miniature misses a request now and then, which skews it no
// more than sampling does.
//
// A miniature is the cache's policy on a table of its own: buckets of 8
// slots holding 32-bit fingerprints of the sampled keys' hashes and their
// policy words, two candidates chosen as the cache's are (go-left over two
// halves), a ghost of its own, and a tick of its own inserts. Its memory is
// bounded: under 2 × minShadow entries of 12 bytes (fingerprint, policy
// word, the key's other candidate) and a ghost of 4 words an entry
// rounded up to a power of two (16 to 32 bytes an entry), so the
// numRankings + 2 miniatures of a cache (the rankings', the twin and the
// prior's) take at most 11 × 512 × 44 bytes, 242 KiB, whatever its
// capacity.
//
// The same test decides whether evictions relocate (relocate.go): a twin
// of the miniature of the ranking in use relocates, and the cache starts
// relocating when the twin leads that miniature by z > zSwitch, and stops
// when it trails by as much. The twin's counts are a duel (duel.go), kept
// over a short memory, as the rankings' are, and a long one a hundred
// times longer, which finds the leads of a few tenths of a point that
// the short one cannot tell from noise; the short one still overrules
// it, so a change of workload moves the cache as fast as before.
// Relocation costs an evicting Set several times its work, so the cache
// pays for it only where it is seen to win: on loops and long cycles the
// twin wins clearly; on Zipf draws at caches of 1% of the keys it wins by
// a few tenths of a point, which the long memory finds; where every
// policy hits alike (uniform draws) it stays off. When the cache moves
// to another ranking, the twin restarts as a relocating copy of that
// ranking's miniature, its duel from nothing (restartTwin): its evidence
// is about relocation under the ranking in use.
//
// Before that rule, relocation has a trial (trial.go): it turns on at the
// first period and stays on only if the twin shows it paying by a lower
// bar, on a sample of its own size. Without the trial, the short traces
// of bench --corpus were over before the twin cleared zSwitch. A lower
// bar for the rule itself was no answer: with a bar of 2 each way
// relocation turned on and off by chance for as long as the cache ran
// where the twin only ties (2 of 12 seeds of uniform draws turned it on),
// while the trial decides once.
//
// The prior (ranking.go) is chosen the same way: one more miniature runs
// the ranking in use under the other prior, its counts a duel too, and
// the cache takes that prior when its miniature leads by z > zSwitch.
// The two then trade places (the miniature that led becomes the
// ranking's, the other runs the prior left behind) and their counts with
// them, so moving back takes as clear a lead again. The counts start once
// that miniature has inserted as many keys as the short prior's span (8
// capacities): before then most keys have had at most one gap, the one
// place the priors differ, and a prior that fits a cold cache (the long
// one, on the short traces lirs/cs and lirs/ps at 25% of bench --corpus)
// would take over and then not trail clearly enough to leave. On Zipf
// draws over many more keys than the cache holds the long prior leads (by
// about 2.5 points at s = 0.6 and a cache of 1% of the keys); on loops
// the short one does; the rankings that read no gap (recency) or only the
// last one ("due, last gap") do not care. How soon a lead shows depends
// on the sampled Gets, and a sample of 1 in rate keys gives a large cache
// few of them: at s = 0.6 and a cache of 10% of a million keys (rate
// 256), bench --corpus's 4M requests make about 15,000 sampled Gets, and
// the long prior's lead, about a point for the cache at full size
// (patient: 35.4% against 34.4%), is under 2 standard deviations in the
// miniatures' counts when the run ends, so the cache keeps the short
// prior there.
//
// The rankings' own choice moves to a new ranking on the short memory
// alone. A small lead of one ranking's miniature over another's is as
// likely the miniatures' bias (their gaps are noisier than the cache's,
// above) as the cache's own; with a long memory as well, bench --corpus
// lost 0.73 points in sum over its 48 trace rows (OLTP at 25% −1.1,
// lirs/ps at 5% −0.5) and 0.09 over its Zipf rows, and took aging:0.8
// at 10% from patient to recency-frequency, a point lower. The twin and
// the prior's miniature differ from the ranking's in one mechanism each,
// on the same sample, and their small leads carry to the cache.
//
// The long memory (longWins, decayed as a duel's long memory is) may
// only take the cache back to a ranking it has used (visited), when the
// short memory leans the same way. That undoes a move made on a lead
// that was real for a while but is not the workload's steady state: on
// synthetic:mixloop at 25% of 100,000 keys the cache moved from patient
// to due-last-gap in the warm-up, on the loop's first pass, and stayed,
// though afterwards patient's and due's miniatures each led by about
// 0.8 point; that lead is 1.7 to 1.9 standard deviations in the short
// memory, and clears the bar in the long one. A ranking the cache has
// not used is no more reachable than before, so the miniatures' bias
// between two rankings never moves it the first time. Over the medians
// of three hash seeds, bench --corpus moved by +0.67 points in sum over
// its 48 trace rows (lirs/cpp at 10% +0.29, lirs/sprite at 1% +0.22, no
// row lower by more than 0.08), +1.09 over synthetic:all at 100,000 keys
// (mixloop at 25% +0.69, phases at 5% +0.34), by nothing over its 8 Zipf
// and 6 aging rows and synthetic:all at 20,000 and at a million keys.
type shadows struct {
	mu sync.Mutex
	// pinned keeps the cache on the ranking it started with
	// (CacheOptions.Ranking): choose still rates every ranking, but moves
	// to none.
	pinned bool
	minis  [numRankings]mini
	wins   [numRankings][numRankings]float64
	// longWins are wins over the long memory (duel.go's longDecay), and
	// visited has bit c set once the cache has used ranking c: the long
	// memory moves the cache back only to a ranking it has used.
	longWins [numRankings][numRankings]float64
	visited  uint32
	// twin is a miniature that relocates under the ranking in use;
	// twinDuel compares it with that ranking's miniature.
	twin     mini
	twinDuel duel
	// alt runs the ranking in use under the other prior; altDuel
	// compares it with that ranking's miniature.
	alt     mini
	altDuel duel
	// warm is the inserts the prior's miniature makes before its
	// counts start (see above).
	warm    uint64
	miniCap int
	gets    int // sampled Gets in this period
	// period is the sampled Gets between two choices: an eighth of a
	// miniature's capacity, at least 16.
	period int
	pol    *policy
	// What Cache.Policy reports (policy_state.go): the sampled Gets and
	// periods so far; each miniature's hits (the rankings', the twin's
	// and the prior's) and the sampled Gets, decayed as wins are; the
	// last changes the chooser made, in a ring, and their number; and
	// the cache's Gets so far, to date a change by.
	sampled, periods  uint64
	hits              [numRankings]float64
	twinHits, altHits float64
	seen              float64
	changeLog         [MaxPolicyChanges]PolicyChange
	changes           uint64
	cacheGets         func() uint64
	// trial is where relocation's trial stands (trial.go).
	trial trial
}

// Sampling: a key is in the sample when bits shadowBit to
// shadowBit+sampleBits−1 of its hash are zero; the table's candidates take
// the top bits of each half of the hash and its tag the low 8, so the
// sample is independent of both.
const (
	shadowBit   = 8
	minShadow   = 256
	shadowDecay = 0.987
	zSwitch     = 4
)

// shadowMask returns the mask of the hash bits (after shifting by
// shadowBit) that are zero for a sampled key in a cache of the given
// capacity, and the miniatures' capacity.
func shadowMask(capacity int) (mask uint64, miniCap int) {
	rate := uint64(1)
	for uint64(capacity)/(2*rate) >= minShadow && rate < 1<<16 {
		rate *= 2
	}
	return rate - 1, max(capacity/int(rate), 16)
}

func (sh *shadows) init(capacity int, pol *policy, cacheGets func() uint64) {
	_, mc := shadowMask(capacity)
	for c := range sh.minis {
		sh.minis[c].init(mc, c, pol.prior())
	}
	sh.twin.init(mc, pol.choice(), pol.prior())
	sh.twin.move = true
	sh.alt.init(mc, pol.choice(), otherPrior(pol.prior()))
	sh.warm = priorCaps[shortPrior] * uint64(mc)
	sh.miniCap = mc
	sh.period = max(mc/8, 16)
	sh.pol = pol
	sh.visited = 1 << pol.choice()
	sh.cacheGets = cacheGets
}

// get replays a sampled Get of the key with hash h: a hit, or a miss
// that inserts it.
func (sh *shadows) get(h uint64) {
	if !sh.mu.TryLock() {
		return
	}
	// The miniatures have one size, so the key's candidates and
	// fingerprint are the same in each.
	m := &sh.minis[0]
	fp := fingerprint(h)
	b0 := uint64(uint32(h)) * m.half >> 32
	b1 := m.half + (h>>32)*m.half>>32
	var hit [numRankings]bool
	for c := range sh.minis {
		hit[c] = sh.minis[c].get(fp, b0, b1)
	}
	cur := hit[sh.pol.choice()]
	twin := sh.twin.get(fp, b0, b1)
	sh.twinDuel.count(twin, cur)
	alt := sh.alt.get(fp, b0, b1)
	if sh.alt.tick >= sh.warm {
		sh.altDuel.count(alt, cur)
	}
	sh.sampled++
	sh.seen++
	sh.twinHits += b2f(twin)
	sh.altHits += b2f(alt)
	for i := range hit {
		if !hit[i] {
			continue
		}
		sh.hits[i]++
		for j := range hit {
			if !hit[j] {
				sh.wins[i][j]++
				sh.longWins[i][j]++
			}
		}
	}
	if sh.gets++; sh.gets >= sh.period {
		sh.choose()
	}
	sh.mu.Unlock()
}

// choose ends a period: the cache takes the ranking whose miniature beat
// the one in use by more than zSwitch (see shadows), the one that beat it
// by most if several did. The caller holds sh.mu.
func (sh *shadows) choose() {
	sh.gets = 0
	cur := sh.pol.choice()
	best, bestZ := cur, float64(zSwitch)
	for c := range sh.wins {
		w, l := sh.wins[c][cur], sh.wins[cur][c]
		if w <= l {
			continue
		}
		if z := lead(w, l); z > bestZ {
			best, bestZ = c, z
		}
	}
	if best == cur {
		for c := range sh.longWins {
			if c == cur || sh.visited&(1<<c) == 0 || sh.wins[c][cur] <= sh.wins[cur][c] {
				continue
			}
			if z := lead(sh.longWins[c][cur], sh.longWins[cur][c]); z > bestZ {
				best, bestZ = c, z
			}
		}
	}
	pr := sh.pol.prior()
	sh.periods++
	if best != cur && !sh.pinned {
		// The move spends the pair's evidence (see shadows).
		sh.wins[best][cur], sh.wins[cur][best] = 0, 0
		sh.longWins[best][cur], sh.longWins[cur][best] = 0, 0
		sh.visited |= 1 << best
		sh.pol.set(best)
		sh.restartTwin(best, pr)
		sh.alt.r = sh.rank(best, otherPrior(pr))
		sh.log(PolicyChange{Kind: changeRanking, From: rankings[cur].name, To: rankings[best].name, Lead: bestZ})
	} else if z := sh.altDuel.lead(); z > zSwitch {
		sh.altDuel.acted()
		sh.switchPrior(cur, pr)
		sh.log(PolicyChange{Kind: changePrior, From: priorNames[pr], To: priorNames[otherPrior(pr)], Lead: z})
	}
	for i := range sh.wins {
		for j := range sh.wins[i] {
			sh.wins[i][j] *= shadowDecay
			sh.longWins[i][j] *= longDecay
		}
		sh.hits[i] *= shadowDecay
	}
	sh.seen *= shadowDecay
	sh.twinHits *= shadowDecay
	sh.altHits *= shadowDecay
	sh.runTrial()
	switch z, on := sh.twinDuel.lead(), sh.pol.moves.Load(); {
	case !on && z > zSwitch:
		sh.pol.moves.Store(true)
		sh.twinDuel.acted()
		sh.log(PolicyChange{Kind: changeRelocation, From: "off", To: "on", Lead: z})
	case on && z < -zSwitch:
		sh.pol.moves.Store(false)
		sh.twinDuel.acted()
		sh.log(PolicyChange{Kind: changeRelocation, From: "on", To: "off", Lead: z})
	}
	sh.twinDuel.decay()
	sh.altDuel.decay()
}

// restartTwin makes the twin the miniature of ranking c under prior pr,
// relocating, and clears its duel: the cache has just moved to c. The
// twin's evidence is about relocation under the ranking in use; kept
// across the move, its counts would mix two rankings' and its entries
// would be those the old ranking chose, so the duel would weigh the move
// as much as relocation. In ExampleCache_Policy (a loop over twice the
// cache) relocation's trial failed at the very Get of the move to "due,
// last gap", and relocation came back 29,000 Gets later; with the
// restart it stays on.
func (sh *shadows) restartTwin(c, pr int) {
	sh.twin.copyFrom(&sh.minis[c])
	sh.twin.r = sh.rank(c, pr)
	sh.twinDuel = duel{}
}

// log records a change of the policy, dated with the cache's Gets and
// the sampled ones (see PolicyChange). The caller holds sh.mu.
func (sh *shadows) log(c PolicyChange) {
	c.Gets = sh.cacheGets()
	c.SampledGets = sh.sampled
	sh.changeLog[sh.changes%MaxPolicyChanges] = c
	sh.changes++
}

// b2f is 1 for true and 0 for false.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// rank returns ranking c under prior pr in the miniatures' units.
func (sh *shadows) rank(c, pr int) rank { return rankings[c].in(uint64(sh.miniCap), pr) }

// lead returns McNemar's z for w wins and l losses: the lead in standard
// deviations of a fair coin's, 0 when there is nothing to compare.
func lead(w, l float64) float64 {
	if w+l == 0 {
		return 0
	}
	return (w - l) / math.Sqrt(w+l)
}

// switchPrior moves the cache from prior pr to the other under ranking
// cur: the prior's miniature, which led, becomes the ranking's, the
// ranking's runs the prior left behind, and every other miniature takes
// the new prior's parameters with the entries it has. The caller holds
// sh.mu.
func (sh *shadows) switchPrior(cur, pr int) {
	np := otherPrior(pr)
	sh.pol.setPrior(np)
	sh.minis[cur], sh.alt = sh.alt, sh.minis[cur]
	sh.hits[cur], sh.altHits = sh.altHits, sh.hits[cur]
	for c := range sh.minis {
		sh.minis[c].r = sh.rank(c, np)
	}
	sh.twin.r = sh.rank(cur, np)
	sh.altDuel.swap()
}

// mini is a miniature cache under one ranking: see shadows.
type mini struct {
	half   uint64   // buckets in each half of the table
	keys   []uint32 // slot fingerprints, 0 for empty; 8 per bucket
	accs   []uint32 // slot policy words
	loads  []uint8  // entries per bucket
	other  []uint32 // the other candidate of each slot's key
	ghost  []uint32 // as the cache's ghost (ghost.go), indexed by fingerprint
	tick   uint64
	r      rank  // the ranking, in the miniature's ticks
	gshift uint8 // the ghost's tick unit
	move   bool  // evictions relocate (relocate.go)
}

func (m *mini) init(capacity, ranking, prior int) {
	n := max((uint64(capacity)+slotsPerBucket-1)/slotsPerBucket, 2)
	n = (n + 1) / 2 * 2
	m.half = n / 2
	m.keys = make([]uint32, n*slotsPerBucket)
	m.accs = make([]uint32, n*slotsPerBucket)
	m.loads = make([]uint8, n)
	m.other = make([]uint32, n*slotsPerBucket)
	g := uint64(1) << bits.Len64(uint64(ghostPerEntry*capacity)-1)
	m.ghost = make([]uint32, g)
	m.r = rankings[ranking].in(uint64(capacity), prior)
	m.gshift = ghostShift(uint64(capacity))
}

// copyFrom makes m a copy of o's entries, ghost and tick (a miniature of
// the same capacity), keeping m's own ranking and relocation setting.
func (m *mini) copyFrom(o *mini) {
	copy(m.keys, o.keys)
	copy(m.accs, o.accs)
	copy(m.loads, o.loads)
	copy(m.other, o.other)
	copy(m.ghost, o.ghost)
	m.tick = o.tick
}

// fingerprint returns the nonzero 32-bit fingerprint of hash h.
func fingerprint(h uint64) uint32 { return uint32(hashfn.Mix(h)) | 1 }

// get looks up the key of fingerprint fp, whose candidates are b0 and b1,
// and reports whether it was there: a use if it is, else an insert into
// the less loaded candidate (the left on a tie, as go-left places),
// evicting the ranking's victim among both when both are full.
func (m *mini) get(fp uint32, b0, b1 uint64) bool {
	for _, b := range [2]uint64{b0, b1} {
		for j := b * slotsPerBucket; j < (b+1)*slotsPerBucket; j++ {
			if m.keys[j] == fp {
				m.accs[j] = m.r.accessed(m.accs[j], m.tick)
				return true
			}
		}
	}
	m.insert(fp, b0, b1)
	return false
}

// relocate is the cache's relocate (relocate.go) in a miniature: given
// the victim j among the candidates b0 and b1, with its score and age,
// it returns the slot whose entry goes (v) and the slot the new key takes
// (j): the same slot, or a resident's slot in b0 or b1 and, in the
// resident's other candidate, the slot of an entry that scores above the
// victim, which the resident takes.
func (m *mini) relocate(j int, b0, b1 uint64, best int64, oldest uint32) (v, nj int) {
	v, nj = j, j
	if m.r.disposable(m.accs[j], m.tick) {
		return v, nj
	}
	for _, c := range [2]uint64{b0, b1} {
		for x := c * slotsPerBucket; x < (c+1)*slotsPerBucket; x++ {
			a := uint64(m.other[x])
			if a == b0 || a == b1 {
				continue
			}
			for y := a * slotsPerBucket; y < (a+1)*slotsPerBucket; y++ {
				if m.keys[y] == 0 {
					continue // the cache's relocate looks at entries only
				}
				if sc, age := m.r.score(m.accs[y], m.tick); sc > best || sc == best && age > oldest {
					best, oldest, v, nj = sc, age, int(y), int(x)
				}
			}
			if v != nj && m.r.disposable(m.accs[v], m.tick) {
				return v, nj
			}
		}
	}
	return v, nj
}

// insert places the key of fingerprint fp, which is not there.
func (m *mini) insert(fp uint32, b0, b1 uint64) {
	j := -1
	m.tick++
	b := b0
	if m.loads[b1] < m.loads[b0] {
		b = b1
	}
	if m.loads[b] < slotsPerBucket {
		for x := b * slotsPerBucket; ; x++ {
			if m.keys[x] == 0 {
				j = int(x)
				break
			}
		}
		m.loads[b]++
	} else {
		best, oldest := int64(math.MinInt64), uint32(0)
		for _, c := range [2]uint64{b0, b1} {
			for x := c * slotsPerBucket; x < (c+1)*slotsPerBucket; x++ {
				if sc, age := m.r.score(m.accs[x], m.tick); sc > best || sc == best && age > oldest {
					best, oldest, j = sc, age, int(x)
				}
			}
		}
		v := j
		if m.move {
			v, j = m.relocate(j, b0, b1, best, oldest)
		}
		fv := m.keys[v]
		m.ghost[uint64(fv>>8)&uint64(len(m.ghost)-1)] = ghostWord(m.accs[v], m.tick, m.gshift, fv>>24|1)
		if v != j {
			// The resident in slot j moves to slot v, its other
			// candidate, evicting v's entry.
			m.keys[v], m.accs[v], m.other[v] = m.keys[j], m.accs[j], uint32(j/slotsPerBucket)
		}
	}
	m.other[j] = uint32(b0 + b1 - uint64(j/slotsPerBucket))
	gw := &m.ghost[uint64(fp>>8)&uint64(len(m.ghost)-1)]
	var (
		gap uint8
		age uint32
	)
	known := *gw != 0 && *gw>>24 == fp>>24|1
	if known {
		gap, age = ghostRead(*gw, m.tick, m.gshift)
		*gw = 0
	}
	m.keys[j] = fp
	m.accs[j] = m.r.newcomer(gap, age, known, m.tick)
}
