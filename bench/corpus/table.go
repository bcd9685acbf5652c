package corpus

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twochoice/twochoice/bench/hitratio"
	"github.com/twochoice/twochoice/internal/cli"
	"github.com/twochoice/twochoice/store"
)

// WriteTable prints a corpus run for people: what ran, a row per workload
// and capacity with every cache's hit ratio, Belady's and the margin, the
// summary, and the problems if any.
func WriteTable(w io.Writer, res *Result) error {
	caps := 0
	if res.Workloads > 0 {
		caps = len(res.Rows) / res.Workloads
	}
	fmt.Fprintf(w, "corpus: %d workloads × %d capacities = %d rows, %d replays in %v\n", res.Workloads, caps, len(res.Rows), res.Replays, res.Wall.Round(100*time.Millisecond))
	fmt.Fprintf(w, "machine %s\n\n", res.Machine)
	fmt.Fprintln(w, "Hit ratios in percent; a read that misses inserts its key. Traces are replayed whole, every request counted.")
	if res.ZipfKeys > 0 {
		fmt.Fprintf(w, "zipf:S is Zipf with exponent S over %d keys; aging:S the same law over ranks counted back from the newest key, a key born every %d requests; synthetic:K a shape of kind K over as many ranks (twochoice bench --help): %d requests counted after as many that warm the caches up (seed %d).\n",
			res.ZipfKeys, AgingStep, res.ZipfRequests, res.Seed)
	}
	fmt.Fprintln(w, "Capacities are shares of each workload's distinct keys, rounded to the nearest entry.")
	fmt.Fprintln(w, "belady is Belady's optimum: a miss inserts its key and the entry used farthest in the future goes.")
	if res.Rounds > 1 {
		fmt.Fprintf(w, "otter and ristretto draw seeds at random: each figure of theirs is the median of %d replays.\n", res.Rounds)
	} else {
		fmt.Fprintln(w, "otter and ristretto draw seeds at random: their figures vary from run to run (--rounds takes medians).")
	}
	if res.Seeds > 1 {
		fmt.Fprintf(w, "twochoice's figures are the median of its replays under hash seeds 1 to %d.\n", res.Seeds)
	}
	if res.Ranking != "" {
		fmt.Fprintf(w, "twochoice's eviction policy is pinned to the ranking %q (--ranking): it does not adapt.\n", res.Ranking)
	}
	fmt.Fprintf(w, "margin is twochoice (the bounded %s store) less the best of %s, in points.\n\n", TwochoicePeer, strings.Join(res.Peers, ", "))

	header := append(append([]string{"workload", "capacity", "entries"}, res.Caches...), hitratio.BeladyName, "best peer", "margin")
	flagged := len(res.Problems) > 0
	if flagged {
		header = append(header, "check")
	}
	var rows [][]string
	last := ""
	for _, r := range res.Rows {
		name := r.Workload
		if name == last {
			name = ""
		}
		last = r.Workload
		line := []string{name, r.Capacity, strconv.Itoa(r.Entries)}
		for _, c := range res.Caches {
			line = append(line, pct(r.HitRatio, c))
		}
		line = append(line, pct(r.HitRatio, hitratio.BeladyName), r.BestPeer, points(r.Margin))
		if flagged {
			check := ""
			if len(r.Problems) > 0 {
				check = "PROBLEM"
			}
			line = append(line, check)
		}
		rows = append(rows, line)
	}
	if err := cli.WriteTable(w, header, rows); err != nil {
		return err
	}
	writeSummary(w, res.Summary)
	for _, p := range res.Problems {
		fmt.Fprintf(w, "PROBLEM: %s\n", p)
	}
	return nil
}

// writeSummary prints the summary's lines.
func writeSummary(w io.Writer, s Summary) {
	fmt.Fprintf(w, "\nSummary over the %d rows with a margin:\n", s.Rows)
	fmt.Fprintf(w, "  within %.1f point of the best peer, or ahead: %d rows (ahead in %d)\n", WithinPoints, s.Within, s.Ahead)
	fmt.Fprintf(w, "  mean margin: %+.2f points\n", s.MeanMargin)
	if s.Worst != nil {
		fmt.Fprintf(w, "  worst row: %s at %s (%d entries): %+.2f points (twochoice %.2f%%, %s %.2f%%)\n",
			s.Worst.Workload, s.Worst.Capacity, s.Worst.Entries, s.Worst.Margin, 100*s.Worst.Twochoice, s.Worst.BestPeer, 100*s.Worst.Best)
	}
	if s.GapClosed != nil {
		fmt.Fprintf(w, "  gap to belady closed: %.1f%% (sum over the rows of twochoice − best peer, over that of belady − best peer)\n", 100**s.GapClosed)
	}
	if p := s.Pinned; p != nil {
		fmt.Fprintf(w, "  each row's best ranking, pinned: within on %d rows, mean margin %+.2f points; the adaptive policy gives up %+.2f points a row to it, more than %.1f on %d rows\n",
			p.Within, p.MeanMargin, p.MeanCost, WithinPoints, p.Trailing)
		fmt.Fprintf(w, "  the best single ranking, %s, pinned on every row: within on %d rows, mean margin %+.2f points\n", p.Single, p.SingleWithin, p.SingleMargin)
	}
}

// pct prints a hit ratio in percent, or "-" for none.
func pct(h map[string]float64, name string) string {
	v, ok := h[name]
	if !ok {
		return "-"
	}
	return strconv.FormatFloat(100*v, 'f', 2, 64)
}

// points prints a margin, or "-" for none.
func points(m *float64) string {
	if m == nil {
		return "-"
	}
	return fmt.Sprintf("%+.2f", *m)
}

// WriteCSV prints the rows as CSV: a column per cache's hit ratio (a
// fraction, as bench's CSV has it), belady and belady-bypass, the best
// peer, the margin in points, and the row's problems joined by "; ".
func WriteCSV(w io.Writer, res *Result) error {
	header := append(append([]string{"workload", "capacity", "entries", "distinct_keys", "reads"}, res.Caches...),
		hitratio.BeladyName, hitratio.BeladyBypassName, "best_peer", "margin_points", "problems")
	header = append(header, policyColumns...)
	for _, name := range res.Rankings {
		header = append(header, "pinned_"+name)
	}
	var rows [][]string
	for _, r := range res.Rows {
		line := []string{r.Workload, r.Capacity, strconv.Itoa(r.Entries), strconv.Itoa(r.DistinctKeys), strconv.FormatInt(r.Reads, 10)}
		for _, c := range append(res.Caches, hitratio.BeladyName, hitratio.BeladyBypassName) {
			v := ""
			if h, ok := r.HitRatio[c]; ok {
				v = strconv.FormatFloat(h, 'g', -1, 64)
			}
			line = append(line, v)
		}
		m := ""
		if r.Margin != nil {
			m = strconv.FormatFloat(*r.Margin, 'g', -1, 64)
		}
		line = append(line, r.BestPeer, m, strings.Join(r.Problems, "; "))
		line = append(line, policyCSV(r.Policy)...)
		for _, name := range res.Rankings {
			v := ""
			if h, ok := r.Pinned[name]; ok {
				v = strconv.FormatFloat(h, 'g', -1, 64)
			}
			line = append(line, v)
		}
		rows = append(rows, line)
	}
	return cli.WriteCSV(w, header, rows)
}

// policyCSV returns the CSV columns of twochoice's policy at the end of a
// row (policyColumns), empty when there is none.
func policyCSV(p *store.PolicyState) []string {
	if p == nil {
		return make([]string, len(policyColumns))
	}
	return []string{p.Ranking, p.Prior, strconv.FormatBool(p.Relocating), strconv.FormatUint(p.ChangesTotal, 10)}
}

// policyColumns are the CSV's columns of twochoice's policy.
var policyColumns = []string{"policy_ranking", "policy_prior", "policy_relocating", "policy_changes"}

// WritePolicy prints, for people, the setting twochoice's eviction policy
// ended each row on (store.PolicyState), then every change that led
// there, at the cache's Get count and as a share of the row's requests,
// so that how the policy moves can be read next to where it lands.
func WritePolicy(w io.Writer, res *Result) error {
	fmt.Fprintln(w, "\ntwochoice's eviction policy at the end of each row: the ranking, the prior, whether evictions relocate, the share of keys its miniatures replay, and the changes made.")
	header := []string{"workload", "capacity", "margin", "ranking", "prior", "relocating", "sample", "changes"}
	var rows, changes [][]string
	last := ""
	for _, r := range res.Rows {
		p := r.Policy
		if p == nil {
			continue
		}
		name := r.Workload
		if name == last {
			name = ""
		}
		last = r.Workload
		reloc := "no"
		if p.Relocating {
			reloc = "yes"
		}
		rows = append(rows, []string{name, r.Capacity, points(r.Margin), p.Ranking, p.Prior, reloc,
			fmt.Sprintf("1 in %d", p.SampleRate), strconv.FormatUint(p.ChangesTotal, 10)})
		for _, c := range p.Changes {
			share := "-"
			if n := r.Warmup + r.Reads; n > 0 {
				share = fmt.Sprintf("%.0f%%", 100*float64(c.Gets)/float64(n))
			}
			kind := c.Kind
			if c.Trial {
				kind += " trial"
			}
			changes = append(changes, []string{r.Workload, r.Capacity, strconv.FormatUint(c.Gets, 10), share,
				kind, c.From + " → " + c.To, fmt.Sprintf("%+.1f", c.Lead)})
		}
	}
	if err := cli.WriteTable(w, header, rows); err != nil {
		return err
	}
	if len(changes) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nThe changes, oldest first (the last %d of a row at most): the cache's Gets when it changed and their share of the row's requests (a generated workload's uncounted first half included), and the challenger's lead in standard deviations (the bar is %v; relocation's trial starts at the first evidence, whatever the lead, and ends on a bar of its own).\n", store.MaxPolicyChanges, zBar(res))
	return cli.WriteTable(w, []string{"workload", "capacity", "at Get", "share", "kind", "change", "lead"}, changes)
}

// WriteRankings prints, for people, the replays pinned to each ranking
// (Config.Rankings): per row, twochoice's adaptive hit ratio and margin,
// the ranking that does best pinned and its hit ratio and margin, what
// the adaptive policy gives up to it, and the ranking the policy ended on
// (WriteTable's summary sums them up). A row where the best ranking is
// within of the best peer and the adaptive policy is not is one its
// chooser loses; one where no ranking is within is one its rankings do.
func WriteRankings(w io.Writer, res *Result) error {
	if len(res.Rankings) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\ntwochoice pinned to each of its %d rankings (--rankings), beside its adaptive policy: hit ratios in percent, margins over the best peer and the adaptive policy's cost against the row's best ranking in points.\n", len(res.Rankings))
	header := []string{"workload", "capacity", "adaptive", "margin", "best ranking", "pinned", "margin", "cost", "ended on"}
	var rows [][]string
	last := ""
	for _, r := range res.Rows {
		c, ok := r.Choice()
		if !ok {
			continue
		}
		name := r.Workload
		if name == last {
			name = ""
		}
		last = r.Workload
		rows = append(rows, []string{name, r.Capacity, pct(r.HitRatio, Twochoice), points(r.Margin), c.Ranking,
			strconv.FormatFloat(100*c.HitRatio, 'f', 2, 64), points(c.Margin), fmt.Sprintf("%+.2f", c.Cost), r.EndedOn()})
	}
	return cli.WriteTable(w, header, rows)
}

// EndedOn is the ranking twochoice's policy ended the row on, "-" when
// twochoice refused the capacity.
func (r Row) EndedOn() string {
	if r.Policy == nil {
		return "-"
	}
	return r.Policy.Ranking
}

// zBar is the policy's bar, from any row that has a policy.
func zBar(res *Result) float64 {
	for _, r := range res.Rows {
		if r.Policy != nil {
			return r.Policy.Bar
		}
	}
	return 0
}

// WriteTimeline prints, for people, each row's timeline (Config.Timeline):
// every cache's hit ratio in each window of the row's counted reads, in
// percent, twochoice's rankings pinned after the peers, and the window in
// which each of twochoice's ranking and prior changes came (its
// relocation's, trial or not, are in WritePolicy's list). A row whose
// replays kept no timeline is left out.
func WriteTimeline(w io.Writer, res *Result) error {
	if res.Timeline == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nEach row's hit ratio in percent over %d windows of its counted reads, oldest first (\"all\" is the whole row), and the windows in which twochoice's ranking or prior changed.\n", res.Timeline)
	header := []string{"workload", "capacity", "cache"}
	for i := range res.Timeline {
		header = append(header, strconv.Itoa(i+1))
	}
	header = append(header, "all", "changes")
	var rows [][]string
	for _, r := range res.Rows {
		first := true
		line := func(name string, tl []float64, all float64, changes string) {
			wl, cp := "", ""
			if first {
				wl, cp = r.Workload, r.Capacity
				first = false
			}
			l := []string{wl, cp, name}
			for i := range res.Timeline {
				v := ""
				if i < len(tl) {
					v = fmt.Sprintf("%.2f", 100*tl[i])
				}
				l = append(l, v)
			}
			rows = append(rows, append(l, fmt.Sprintf("%.2f", 100*all), changes))
		}
		for _, c := range append(slices.Clone(res.Caches), hitratio.BeladyName) {
			if tl, ok := r.Timeline[c]; ok {
				changes := ""
				if c == Twochoice {
					changes = windowChanges(r)
				}
				line(c, tl, r.HitRatio[c], changes)
			}
		}
		for _, name := range res.Rankings {
			if tl, ok := r.PinnedTimeline[name]; ok {
				line("pinned "+name, tl, r.Pinned[name], "")
			}
		}
	}
	return cli.WriteTable(w, header, rows)
}

// windowChanges returns twochoice's ranking and prior changes in row r as
// "window: from → to" items, the window 1-based (0 for a change among a
// generated workload's uncounted first requests). A cache's Get count
// includes those requests, and every request of a corpus row is a read,
// so a change at Get g is in counted read g − Warmup.
func windowChanges(r Row) string {
	if r.Policy == nil || r.Window == 0 {
		return ""
	}
	var items []string
	for _, c := range r.Policy.Changes {
		if c.Kind != "ranking" && c.Kind != "prior" {
			continue
		}
		win := int64(0)
		if g := int64(c.Gets); g > r.Warmup {
			win = (g-r.Warmup-1)/r.Window + 1
		}
		items = append(items, fmt.Sprintf("%d: %s → %s", win, c.From, c.To))
	}
	return strings.Join(items, "; ")
}
