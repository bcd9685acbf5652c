package corpus

import "github.com/twochoice/twochoice/store"

// WithinPoints is how far behind the best peer, in points, a row's
// twochoice may be and still count as within (Summary.Within).
const WithinPoints = 0.5

// Summary sums up a corpus run's rows (see the package documentation).
type Summary struct {
	// Rows are the rows with a margin, of which Within have a margin of
	// at least −WithinPoints and Ahead one above 0.
	Rows   int `json:"rows"`
	Within int `json:"within_half_point"`
	Ahead  int `json:"ahead"`
	// MeanMargin is the mean of the rows' margins, in points.
	MeanMargin float64 `json:"mean_margin_points"`
	// Worst is the row of the lowest margin (the first of them on a tie).
	Worst *Worst `json:"worst,omitempty"`
	// GapClosed is Σ (twochoice − best) / Σ (belady − best) over the rows:
	// the share of the best peers' distance to Belady's optimum that
	// twochoice covers (0: level with the best peers; 1: at the optimum).
	// Nil when the best peers are at the optimum on every row.
	GapClosed *float64 `json:"gap_closed,omitempty"`
	// Pinned sums up the replays pinned to each ranking, when the run
	// made them (Config.Rankings).
	Pinned *PinnedSummary `json:"pinned,omitempty"`
}

// PinnedSummary sums up the replays pinned to each ranking over the rows
// with a margin: how the adaptive policy compares with the ranking that
// does best on each row, chosen in hindsight, and with the one ranking
// that does best over all the rows.
type PinnedSummary struct {
	// Within is the rows where the row's best ranking is within
	// WithinPoints of the best peer, or ahead, and MeanMargin the mean of
	// its margins, in points: the figures of a policy that knew each
	// row's best ranking from the start.
	Within     int     `json:"within_half_point"`
	MeanMargin float64 `json:"mean_margin_points"`
	// MeanCost is the mean of the row's best ranking less the adaptive
	// policy, in points: what choosing online gives up (below 0 where
	// moving between rankings within a row beats staying on any one).
	// Trailing counts the rows where it gives up more than WithinPoints.
	MeanCost float64 `json:"mean_cost_points"`
	Trailing int     `json:"trailing"`
	// Single is the ranking of the highest mean margin over all rows, and
	// SingleWithin and SingleMargin its figures: the best a cache that
	// never adapts could have chosen for this corpus.
	Single       string  `json:"single"`
	SingleWithin int     `json:"single_within_half_point"`
	SingleMargin float64 `json:"single_mean_margin_points"`
}

// BestPinned returns the ranking of the row's highest pinned hit ratio
// (the first in store.Rankings()'s order on a tie) and that hit ratio;
// ok is false for a row without pinned replays.
func (r Row) BestPinned() (ranking string, hit float64, ok bool) {
	for _, name := range store.Rankings() {
		if h, in := r.Pinned[name]; in && (!ok || h > hit) {
			ranking, hit, ok = name, h, true
		}
	}
	return ranking, hit, ok
}

// Choice is a row's best pinned ranking (BestPinned) set against the
// best peer and against the adaptive policy.
type Choice struct {
	Ranking  string
	HitRatio float64
	// Margin is HitRatio less the best peer's, in points; nil when the
	// row has no margin. Cost is HitRatio less the adaptive policy's, in
	// points: what choosing online gave up on the row.
	Margin *float64
	Cost   float64
}

// Choice returns the row's Choice; ok is false for a row without pinned
// replays.
func (r Row) Choice() (c Choice, ok bool) {
	c.Ranking, c.HitRatio, ok = r.BestPinned()
	if !ok {
		return c, false
	}
	if r.Margin != nil {
		m := 100 * (c.HitRatio - r.Best)
		c.Margin = &m
	}
	c.Cost = 100 * (c.HitRatio - r.HitRatio[Twochoice])
	return c, true
}

// summarizePinned returns the PinnedSummary of rows, nil if none has
// pinned replays.
func summarizePinned(rows []Row) *PinnedSummary {
	var p PinnedSummary
	n := 0
	type sum struct {
		margin float64 // the ranking's margins, summed
		within int
	}
	single := map[string]sum{}
	for _, r := range rows {
		c, ok := r.Choice()
		if !ok || c.Margin == nil {
			continue
		}
		n++
		p.MeanMargin += *c.Margin
		if *c.Margin >= -WithinPoints {
			p.Within++
		}
		p.MeanCost += c.Cost
		if c.Cost > WithinPoints {
			p.Trailing++
		}
		for name, h := range r.Pinned {
			s := single[name]
			m := 100 * (h - r.Best)
			s.margin += m
			if m >= -WithinPoints {
				s.within++
			}
			single[name] = s
		}
	}
	if n == 0 {
		return nil
	}
	p.MeanMargin /= float64(n)
	p.MeanCost /= float64(n)
	for _, name := range store.Rankings() {
		if s, ok := single[name]; ok && (p.Single == "" || s.margin/float64(n) > p.SingleMargin) {
			p.Single, p.SingleMargin, p.SingleWithin = name, s.margin/float64(n), s.within
		}
	}
	return &p
}

// Worst names the row of the lowest margin.
type Worst struct {
	Workload  string  `json:"workload"`
	Capacity  string  `json:"capacity"`
	Entries   int     `json:"entries"`
	Margin    float64 `json:"margin_points"`
	Twochoice float64 `json:"twochoice"`
	BestPeer  string  `json:"best_peer"`
	Best      float64 `json:"best_peer_hit_ratio"`
}

// Summarize sums up rows.
func Summarize(rows []Row) Summary {
	var s Summary
	var sum, closed, gap float64
	for _, r := range rows {
		if r.Margin == nil {
			continue
		}
		m := *r.Margin
		s.Rows++
		sum += m
		if m >= -WithinPoints {
			s.Within++
		}
		if m > 0 {
			s.Ahead++
		}
		if s.Worst == nil || m < s.Worst.Margin {
			s.Worst = &Worst{Workload: r.Workload, Capacity: r.Capacity, Entries: r.Entries, Margin: m,
				Twochoice: r.HitRatio[Twochoice], BestPeer: r.BestPeer, Best: r.Best}
		}
		closed += r.HitRatio[Twochoice] - r.Best
		gap += r.Belady() - r.Best
	}
	if s.Rows > 0 {
		s.MeanMargin = sum / float64(s.Rows)
	}
	if gap != 0 {
		g := closed / gap
		s.GapClosed = &g
	}
	s.Pinned = summarizePinned(rows)
	return s
}
