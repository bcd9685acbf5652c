package store

// PolicyState is what a cache's adaptive eviction policy has chosen and
// the evidence it chose on (see "Eviction" in the package documentation).
// A cache replays the Gets of a sample of its keys on miniature caches,
// one per ranking (a way of scoring eviction candidates) and two more: a
// twin of the ranking in use that relocates, and one that runs it under
// the other prior. Every period of sampled Gets it compares each of them
// with the miniature of its current setting on the Gets where the two
// differ, and moves to a challenger that leads by more than a bar, in
// standard deviations (McNemar's z). PolicyState shows where the cache
// stands, how far each challenger is from the bar, and when it moved.
type PolicyState struct {
	// Ranking is the ranking in use: "due", "due-last-gap", "frequency",
	// "recency-frequency", "recency", "patient" (the one a cache starts
	// with), "recency-no-window", "probation" or "probation-window".
	// Prior is "short" or "long": the gap a key's first use is blended
	// from. Relocating reports whether an eviction may move a resident to
	// its other candidate to reach a better victim (never with d ≠ 2 or a
	// weight bound).
	Ranking    string `json:"ranking"`
	Prior      string `json:"prior"`
	Relocating bool   `json:"relocating"`
	// Pinned reports a ranking pinned by CacheOptions.Ranking: the cache
	// does not leave it, however far a miniature leads it.
	Pinned bool `json:"pinned"`
	// SampleRate is the share of keys replayed (1 in SampleRate), and
	// MiniatureEntries the capacity of each miniature.
	SampleRate       int `json:"sample_rate"`
	MiniatureEntries int `json:"miniature_entries"`
	// SampledGets are the Gets replayed on the miniatures so far, and
	// Periods the choices made; a choice ends each period.
	SampledGets uint64 `json:"sampled_gets"`
	Periods     uint64 `json:"periods"`
	// Bar is the lead a challenger needs to take over.
	Bar float64 `json:"bar"`
	// Miniatures are the rankings' miniatures, in a fixed order.
	Miniatures []MiniatureState `json:"miniatures"`
	// RelocationLead is the lead of the twin, which relocates, over the
	// miniature of the ranking in use (negative: it trails), and
	// RelocationHitRatio the twin's hit ratio. Once relocation's trial is
	// over (PolicyChange.Trial), a cache that relocates stops when the
	// lead falls under −Bar, and one that does not starts when it passes
	// Bar.
	RelocationLead     float64 `json:"relocation_lead"`
	RelocationHitRatio float64 `json:"relocation_hit_ratio"`
	// PriorLead is the lead of the ranking in use under the other prior,
	// and PriorHitRatio that miniature's hit ratio. The lead is 0 until
	// that miniature has inserted 8 times its capacity: before then most
	// keys have shown at most one gap, the one place the priors differ.
	PriorLead     float64 `json:"prior_lead"`
	PriorHitRatio float64 `json:"prior_hit_ratio"`
	// Changes are the last changes of setting, oldest first, up to
	// MaxPolicyChanges; ChangesTotal counts them all.
	Changes      []PolicyChange `json:"changes"`
	ChangesTotal uint64         `json:"changes_total"`
}

// MiniatureState is one ranking's miniature in a PolicyState.
type MiniatureState struct {
	Ranking string `json:"ranking"`
	// HitRatio is the miniature's hit ratio on the sampled Gets, weighted
	// to the recent ones as the leads are (some 75 periods).
	HitRatio float64 `json:"hit_ratio"`
	// Lead is its lead over the miniature of the ranking in use (0 for
	// that one): it takes over when the lead passes PolicyState.Bar. The
	// ranking the cache last moved from starts again at 0 on the move:
	// its lead counts the sampled Gets since.
	Lead float64 `json:"lead"`
}

// PolicyChange is one change of a cache's policy.
type PolicyChange struct {
	// Gets are the cache's Gets counted when it changed, SampledGets
	// those of them replayed on the miniatures.
	Gets        uint64 `json:"gets"`
	SampledGets uint64 `json:"sampled_gets"`
	// Kind is "ranking", "prior" or "relocation"; From and To are the
	// settings (ranking or prior names, or "off" and "on").
	Kind string `json:"kind"`
	From string `json:"from"`
	To   string `json:"to"`
	// Lead is the challenger's lead that made the change.
	Lead float64 `json:"lead"`
	// Trial marks the start and the end of relocation's trial: a cache
	// turns relocation on at its first period whatever the lead, and its
	// twin's lead, on the trial's own lower bar, decides whether it stays
	// on (see "Relocation" in the package documentation).
	Trial bool `json:"trial,omitempty"`
}

// The kinds of PolicyChange.
const (
	changeRanking    = "ranking"
	changePrior      = "prior"
	changeRelocation = "relocation"
)

// MaxPolicyChanges is the most changes a PolicyState lists.
const MaxPolicyChanges = 32

// Policy returns the state of the cache's eviction policy. It takes the
// lock the miniatures' replays take with TryLock, so a Get that samples
// while it runs skips its replay rather than wait; it is meant for
// reports, not for every request.
func (s *Cache[K, V]) Policy() PolicyState {
	sh := s.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	cur := sh.pol.choice()
	ps := PolicyState{
		Ranking:          rankings[cur].name,
		Prior:            priorNames[sh.pol.prior()],
		Relocating:       sh.pol.moves.Load() && s.cfg.Choices == 2 && s.weigher == nil,
		Pinned:           sh.pinned,
		SampleRate:       int(s.shMask + 1),
		MiniatureEntries: sh.miniCap,
		SampledGets:      sh.sampled,
		Periods:          sh.periods,
		Bar:              zSwitch,
		RelocationLead:   sh.twinDuel.lead(),
		PriorLead:        sh.altDuel.lead(),
		ChangesTotal:     sh.changes,
	}
	ratio := func(h float64) float64 {
		if sh.seen == 0 {
			return 0
		}
		return h / sh.seen
	}
	ps.RelocationHitRatio, ps.PriorHitRatio = ratio(sh.twinHits), ratio(sh.altHits)
	for c := range sh.minis {
		ps.Miniatures = append(ps.Miniatures, MiniatureState{
			Ranking:  rankings[c].name,
			HitRatio: ratio(sh.hits[c]),
			Lead:     lead(sh.wins[c][cur], sh.wins[cur][c]),
		})
	}
	for i := sh.changes - min(sh.changes, MaxPolicyChanges); i < sh.changes; i++ {
		ps.Changes = append(ps.Changes, sh.changeLog[i%MaxPolicyChanges])
	}
	return ps
}
