package corpus

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
	return s
}
