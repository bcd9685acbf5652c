package store

import (
	"fmt"
	"math"
	"strings"
)

// Rankings: the ways a cache can score its eviction candidates (evict.go),
// one of which is in use at a time. Each answers the two questions a
// sampled cache has to answer differently on different workloads: how an
// entry's age bears on its next use (λ), and how long a key that has
// shown no gap yet gets to show one (its newcomer gap and window). The
// cache runs each of them on a miniature cache and uses the one that
// does best (shadow.go); none is tuned to a trace.
//
//	ranking (PolicyState's name)   λ    α    newcomer gap   window   for
//	due                            0    1/2   8 capacities   -       loops, scans
//	due, last gap (due-last-gap)   0    1     8              -       loops whose period shifts
//	frequency                      1    1/4   8              -       independent draws
//	recency with frequency         2.5  1/4   8              C/10     shifting working sets
//	  (recency-frequency)
//	recency                        -    -     -              -       LRU: age alone
//	patient                        1/2  1/2  32              -       skewed draws, long loops
//	recency, no window             2.5  1/4   8              -       shifting sets of long-lived keys
//	  (recency-no-window)
//	probation                      -    1     8              -       popularity that drifts
//	probation with a window        -    1     8              C/4      drift with bursts of newcomers
//	  (probation-window)
//
// The frequency rankings average over more gaps (α = 1/4) than the due
// ones: a frequency is read from the mean of many gaps, while a due time
// follows the latest ones. Recency with and without a window differ in
// what a newcomer is worth: the window keeps it a tenth of a capacity,
// which a workload of short bursts needs and one of long-lived keys pays
// for (OLTP does better with the window, P12 at 5% without it, by about
// a point each, on bench --corpus).
//
// "probation" splits the entries in two, as 2Q does (Johnson and Shasha,
// "2Q: A Low Overhead High Performance Buffer Management Replacement
// Algorithm", VLDB 1994) and segmented LRU: a key whose last gap was at
// most a capacity of inserts, one an LRU cache of this size would
// probably have kept, is protected and ranked by age alone; every other
// key, a newcomer or one whose last gap was longer, is on probation and
// goes first, the oldest first, as from 2Q's first-in first-out queue of
// newcomers. It reads only a key's last gap, so where keys rise in
// popularity and are then dropped for others it keeps neither the keys
// that were hot nor the ones used once. The one capacity is not a tuned
// constant but LRU's own reach. On a Zipf law whose popular keys drift
// (bench --corpus synthetic:drift --keys 20000 --requests 400000), the
// cache at 5% of the keys goes from 54.1% to 55.2% with it, against 2Q's
// 56.0%, and no row of the trace corpus moves by more than 0.2 point.
//
// "probation-window" adds 2Q's newcomer window, a quarter of the
// capacity: a key without a gap is kept until that many inserts have
// passed it, as in 2Q's first-in first-out queue of newcomers, so that a
// newcomer whose second use follows soon is not evicted before it. Where
// popularity drifts, a key that rises does so from its first uses, which
// plain probation evicts first; where keys are used once, the window
// costs a quarter of the capacity. Over the medians of three hash seeds
// (bench --corpus --seeds 3) it adds 5.9 points in sum over the 24 rows of
// synthetic:all at 20,000 keys (drift at 1%, 5%, 10% and 25%: +1.4, +1.7,
// +1.5, +0.2) and leaves the trace corpus, Zipf and aging rows as they
// are. Under seed 1 alone it costs P12 at 10% two points: its miniature
// rates it above the ranking that does best in the full cache there.
//
// "patient" is the ranking a cache starts with: it holds keys it has seen
// used over keys it has not for longer than the others do (a newcomer
// goes first unless some candidate has gone 32 capacities unused), and it
// weighs an entry's age half way between "due" and "frequency", so that
// it neither churns the entries a loop or a skewed workload needs nor
// sticks to ones that are done with, before the miniatures have seen
// enough to choose.
//
// The rankings read one policy word: a key's first gap is blended from
// the same prior gap under every ranking, whatever gap the ranking scores
// a newcomer with, so that the words one ranking leaves mean the same to
// the ranking the cache moves to. Blended from the ranking's own newcomer
// gap, "patient"'s keys would have gaps of some 16 capacities after their
// first hit, which "due" would then evict first: on lirs/multi3 at 25% one
// move from "patient" to "due" would cost 3.7 points against either
// ranking run alone.
//
// The prior is the cache's second choice, made the same way as the
// first (shadow.go): short (8 capacities) or long (64). Under the short
// prior a key's gap follows the first gaps it shows, which is right when
// gaps repeat (loops, working sets). Under the long one, a use moves a
// key's gap only a quarter or half of the way down from 64 capacities,
// so a key's gap says mostly how many times the cache has seen it used,
// and the cache ranks keys by frequency, as LFU does: right for
// independent draws over many more keys than the cache holds (Zipf with
// a low exponent), where a key that came back soon once is more likely a
// rare key that was lucky than a hot one. Either prior forced on every
// workload loses where the other is right (bench --corpus with Zipf rows:
// the long prior takes Zipf 0.6 at 1% from 11.0% to 13.5% and costs
// OLTP at 1% 3 points and lirs/gli at 25% 12).
type ranking struct {
	name     string // as PolicyState reports it
	m4       int64  // 4·(1−λ)
	shift    uint8  // α = 2^-shift; 0 keeps the last gap
	recency  bool   // ignore gaps: score by age alone (but for cutCaps)
	newCaps  uint32 // the gap a key without one is scored with, in capacities (0: its age alone)
	winParts uint32 // such a key is kept for capacity/winParts ticks; 0: no window
	cutCaps  uint32 // a key whose gap is above this many capacities scores as one without; 0: none
}

var rankings = [...]ranking{
	{name: "due", m4: 4, shift: 1, newCaps: 8},
	{name: "due-last-gap", m4: 4, shift: 0, newCaps: 8},
	{name: "frequency", m4: 0, shift: 2, newCaps: 8},
	{name: "recency-frequency", m4: -6, shift: 2, newCaps: 8, winParts: 10},
	{name: "recency", m4: 0, shift: 1, recency: true},
	{name: "patient", m4: 2, shift: 1, newCaps: 32},
	{name: "recency-no-window", m4: -6, shift: 2, newCaps: 8},
	{name: "probation", m4: 0, shift: 0, newCaps: 8, recency: true, cutCaps: 1},
	{name: "probation-window", m4: 0, shift: 0, newCaps: 8, recency: true, cutCaps: 1, winParts: 4},
}

// priorNames are the priors' names, as PolicyState reports them.
var priorNames = [numPriors]string{"short", "long"}

// priorCaps are the priors, in capacities: the gaps a key's first use
// blends from, short and long (see above). Both are longer than the gaps
// of the keys a cache keeps, so that a key used once stays below the keys
// used often; the long one is the ghost's span (ghost.go), so that a key
// the ghost brings back is scored by a gap it can measure.
var priorCaps = [numPriors]uint64{8, 64}

// numPriors is the number of priors; shortPrior is the one a cache
// starts with.
const (
	numPriors  = 2
	shortPrior = 0
)

// otherPrior returns the prior that is not pr.
func otherPrior(pr int) int { return numPriors - 1 - pr }

// Rankings returns the names of the rankings a cache's eviction policy
// chooses among, in the order PolicyState lists their miniatures: the
// names CacheOptions.Ranking accepts.
func Rankings() []string {
	names := make([]string, numRankings)
	for i, r := range rankings {
		names[i] = r.name
	}
	return names
}

// rankingIndex returns the index of the ranking named name, or -1 for the
// empty name (no pinned ranking), or an error wrapping ErrOptions.
func rankingIndex(name string) (int, error) {
	if name == "" {
		return -1, nil
	}
	for i, r := range rankings {
		if r.name == name {
			return i, nil
		}
	}
	return -1, fmt.Errorf("%w: Ranking %q is not one of %s", ErrOptions, name, strings.Join(Rankings(), ", "))
}

// numRankings is the number of rankings.
const numRankings = len(rankings)

// defaultRanking is the ranking a cache starts with ("patient"), and
// rankingFrequency the index of "frequency".
const (
	defaultRanking   = 5
	rankingFrequency = 2
)

// rank is a ranking in the tick units of one cache.
type rank struct {
	m4       int64  // 4·(1−λ)
	gmask    uint32 // all ones, or 0 to score by age alone
	newGap   uint32 // the gap a key without one is scored with
	firstGap uint32 // the gap a key's first use blends from: the prior
	window   uint32 // a key without a gap younger than this is kept
	cut      uint32 // a key whose gap is above this scores as a newcomer
	shift    uint8  // α = 2^-shift
}

// in returns the ranking under prior pr in the units of a cache that
// takes capUnits tick units to insert its capacity.
func (r ranking) in(capUnits uint64, pr int) rank {
	k := rank{m4: r.m4, shift: r.shift, gmask: math.MaxUint32, cut: math.MaxUint32}
	k.newGap = uint32(min(uint64(r.newCaps)*capUnits, math.MaxUint32))
	if r.cutCaps > 0 {
		k.cut = uint32(min(uint64(r.cutCaps)*capUnits, math.MaxUint32))
	}
	if r.recency {
		k.gmask = 0
	}
	k.firstGap = uint32(min(priorCaps[pr]*capUnits, math.MaxUint32))
	if r.winParts > 0 {
		k.window = uint32(min(capUnits/uint64(r.winParts), math.MaxUint32))
	}
	return k
}

// initRanks sets every ranking's parameters under each prior for a cache
// that takes capUnits tick units to insert its capacity.
func (p *policy) initRanks(capUnits uint64) {
	for pr := range p.ranks {
		for c, r := range rankings {
			p.ranks[pr][c] = r.in(capUnits, pr)
		}
	}
}
