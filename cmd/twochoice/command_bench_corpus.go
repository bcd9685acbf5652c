package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/corpus"
	"github.com/twochoice/twochoice/bench/measure"
	"github.com/twochoice/twochoice/internal/cli"
	"github.com/twochoice/twochoice/internal/plot"
)

// corpusFlags are the flags of bench --corpus.
type corpusFlags struct {
	list, caches, capacities string
	keys                     uint64
	requests, rounds, seeds  int
	seed                     uint64
	ranking                  string
	rankings                 bool // replay each ranking pinned, and print the comparison
	plot                     string
	format                   cli.Format
	policy                   bool            // print twochoice's policy after the table
	timeline                 int             // windows of each row's timeline; 0 for none
	set                      map[string]bool // the flags given
}

// runCorpus is bench --corpus: it runs corpus.Run and prints the result.
func runCorpus(ctx context.Context, f corpusFlags, bar *cli.Progress, stdout, stderr io.Writer) error {
	var other []string
	for _, name := range []string{"workload", "s", "threads", "duration", "report"} {
		if f.set[name] {
			other = append(other, "--"+name)
		}
	}
	if len(other) > 0 {
		return fmt.Errorf("%w: --corpus replays its own workloads for hit ratios alone; drop %s", errUsage, strings.Join(other, ", "))
	}
	items, err := corpus.Parse(f.list)
	if errors.Is(err, corpus.ErrConfig) {
		return fmt.Errorf("%w: --corpus: %v", errUsage, err)
	} else if err != nil {
		return err
	}
	if !slices.ContainsFunc(items, corpus.Item.Generated) {
		for _, name := range []string{"keys", "requests"} {
			if f.set[name] {
				return fmt.Errorf("%w: --%s shapes the generated (zipf:S, aging:S, synthetic:K) workloads of --corpus, and %s has none", errUsage, name, f.list)
			}
		}
	}
	if f.policy && f.format != cli.Table {
		return fmt.Errorf("%w: --policy adds a section to the table; --format %v carries the policy already", errUsage, f.format)
	}
	if f.timeline < 0 || f.timeline > corpus.MaxTimeline {
		return fmt.Errorf("%w: --timeline %d: want 0 (none) to %d windows", errUsage, f.timeline, corpus.MaxTimeline)
	}
	if f.timeline > 0 && f.format == cli.CSV {
		return fmt.Errorf("%w: --timeline's windows do not fit the CSV's row per workload and capacity; use --format json or the table", errUsage)
	}
	if f.rounds < 1 {
		return fmt.Errorf("%w: --rounds %d: want at least 1", errUsage, f.rounds)
	}
	if f.seeds < 1 {
		return fmt.Errorf("%w: --seeds %d: want at least 1", errUsage, f.seeds)
	}
	c := corpus.Config{Items: items, Keys: f.keys, Requests: f.requests, Rounds: f.rounds, Seeds: f.seeds, Seed: f.seed, Ranking: f.ranking, Rankings: f.rankings, Timeline: f.timeline, Progress: bar.Update}
	if f.set["capacity"] {
		if c.Capacities, err = cli.ParseList("capacity", f.capacities, measure.ParseCapacity); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	if f.set["caches"] {
		if f.caches == "all" {
			for _, p := range caches.Peers[uint64, struct{}]() {
				if p.Bounded {
					c.Caches = append(c.Caches, p.Name)
				}
			}
		} else if c.Caches, err = cli.ParseList("caches", f.caches, func(n string) (string, error) { return n, nil }); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	res, err := corpus.Run(ctx, c)
	bar.Done()
	switch {
	case errors.Is(err, caches.ErrUnknown) || errors.Is(err, corpus.ErrConfig):
		return fmt.Errorf("%w: %v", errUsage, err)
	case res == nil:
		return interrupted(ctx, err)
	}
	perr := printThenPlot(func() error {
		switch f.format {
		case cli.JSON:
			return cli.WriteJSON(stdout, res)
		case cli.CSV:
			return corpus.WriteCSV(stdout, res)
		}
		if err := corpus.WriteTable(stdout, res); err != nil {
			return err
		}
		if err := corpus.WriteRankings(stdout, res); err != nil {
			return err
		}
		if err := corpus.WriteTimeline(stdout, res); err != nil || !f.policy {
			return err
		}
		return corpus.WritePolicy(stdout, res)
	}, f.plot, func() *plot.Chart { return corpus.MarginChart(res) })
	// A broken bound fails the run, after its figures are out.
	return errors.Join(perr, err)
}
