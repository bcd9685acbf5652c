package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"

	"github.com/twochoice/twochoice/bucket/fluid"
	"github.com/twochoice/twochoice/internal/cli"
	"github.com/twochoice/twochoice/internal/plot"
)

func init() {
	register(command{"fluid", "solve the fluid-limit equations of the placement rules", runFluid})
}

const fluidSynopsis = `fluid [flags]

Solves the fluid limit, the differential equations that the share of bins
with load ≥ k follows as n grows, and prints every share down to 1e-300.
dchoice (and one, halves, double) follow ds_k/dt = s_{k-1}^d − s_k^d;
goleft has one equation per part and level (docs/theory.md).

With --capacity C the bins hold at most C balls and the balls that find all
their candidates full overflow; it then also prints the overflow fraction at
utilizations u = m/(n·C) from 0.70 to 0.95, the sizing figure for a table
of buckets of C slots.

--format json prints an array with one object per rule, even for one
rule; --format csv one line per rule and k.

Examples:
  twochoice fluid --rule dchoice,goleft
  twochoice fluid --rule goleft --d 4 --capacity 8
  twochoice fluid --rule dchoice --load 4 --plot limit.svg`

// fluidRow is one rule's limit, as JSON.
type fluidRow struct {
	Rule             string      `json:"rule"`
	D                int         `json:"d"`
	Load             float64     `json:"load"`
	ShareAtLeast     []float64   `json:"share_at_least"`
	PartShareAtLeast [][]float64 `json:"part_share_at_least,omitempty"`
	PartLoad         []float64   `json:"part_load,omitempty"`
	Capacity         int         `json:"capacity,omitempty"`
	Overflow         *float64    `json:"overflow,omitempty"`
	// Sizing maps utilization u to the overflow fraction, with --capacity.
	Sizing map[string]float64 `json:"overflow_at_utilization,omitempty"`
}

// sizingUtilizations are the columns of the sizing table in docs/theory.md.
var sizingUtilizations = []float64{0.70, 0.75, 0.80, 0.85, 0.90, 0.95}

// sizingKey is utilization u as fluidRow.Sizing, the JSON and the CSV
// header name it: "0.70".
func sizingKey(u float64) string { return strconv.FormatFloat(u, 'f', 2, 64) }

func runFluid(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fluid", fluidSynopsis)
	var (
		ruleList = fs.String("rule", "dchoice", "rules, comma-separated, each once: dchoice, goleft (one, halves and double follow the dchoice equations)")
		d        = fs.Int("d", 2, "number of choices (one choice always has 1)")
		load     = fs.Float64("load", 1, "balls per bin, m/n (> 0, up to 1024)")
		capacity = fs.Int("capacity", 0, "bin capacity C (0: unbounded)")
		plotFile = fs.String("plot", "", "write a chart of the shares to FILE.svg or FILE.png")
		quiet    = fs.Bool("quiet", false, "no progress bar")
		format   = cli.Table
	)
	fs.Var(&format, "format", "output: table, json or csv")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if err := checkPlot(*plotFile); err != nil {
		return err
	}
	rules, err := parseRules(*ruleList)
	if err != nil {
		return err
	}
	if *capacity < 0 {
		return fmt.Errorf("%w: --capacity %d: want 0 (unbounded bins) or more", errUsage, *capacity)
	}
	// The sizing table solves at loads u·C; refuse a capacity that takes
	// the last of them past the solver's bound here, in terms of the flag
	// given, rather than with the solver's "load 1900 is above 1024".
	if top := sizingUtilizations[len(sizingUtilizations)-1] * float64(*capacity); top > fluid.MaxLoad {
		return fmt.Errorf("%w: --capacity %d: the sizing table solves at u·C up to %.6g balls per bin, past the solver's %d; at most %d",
			errUsage, *capacity, top, fluid.MaxLoad, int(fluid.MaxLoad/sizingUtilizations[len(sizingUtilizations)-1]))
	}
	// A solve near fluid.MaxLoad, or with many choices, can take a minute:
	// Ctrl-C stops it.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// The solver's parameter errors come from the command line.
	solveErr := func(err error) error {
		if errors.Is(err, fluid.ErrParams) {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		return interrupted(ctx, err)
	}
	// A progress bar over all the solves (on a terminal, for work of more
	// than half a second): each counts in proportion to its load squared,
	// as the solver's work grows (fluid.SolveProgress).
	loads := []float64{*load}
	if *capacity > 0 {
		for _, u := range sizingUtilizations {
			loads = append(loads, u*float64(*capacity))
		}
	}
	var total, done float64
	for _, l := range loads {
		total += l * l * float64(len(rules))
	}
	bar := cli.NewProgress(stderr, "fluid", *quiet)
	solve := func(p fluid.Params) (*fluid.Result, error) {
		w := p.Load * p.Load
		detail := fmt.Sprintf("%v d=%d load %g", p.Placement, p.D, p.Load)
		res, err := fluid.SolveProgress(ctx, p, func(f float64) {
			bar.Update((done+f*w)/total, detail)
		})
		done += w
		return res, err
	}
	var rows []*fluidRow
	for _, rule := range rules {
		dd := choices(rule, *d)
		res, err := solve(fluid.Params{Placement: rule, D: dd, Load: *load, Capacity: *capacity})
		if err != nil {
			bar.Done()
			return solveErr(err)
		}
		row := &fluidRow{Rule: rule.String(), D: dd, Load: *load, ShareAtLeast: res.ShareAtLeast}
		if len(res.PartShareAtLeast) > 1 {
			row.PartShareAtLeast, row.PartLoad = res.PartShareAtLeast, res.PartLoad
		}
		if *capacity > 0 {
			row.Capacity = *capacity
			o := res.Overflow
			row.Overflow = &o
			row.Sizing = map[string]float64{}
			for _, u := range sizingUtilizations {
				// fluid.OverflowAt's solve, with the bar's progress.
				r, err := solve(fluid.Params{Placement: rule, D: dd, Load: u * float64(*capacity), Capacity: *capacity})
				if err != nil {
					bar.Done()
					return solveErr(err)
				}
				row.Sizing[sizingKey(u)] = r.Overflow
			}
		}
		rows = append(rows, row)
	}
	bar.Done()
	return printThenPlot(func() error {
		switch format {
		case cli.JSON:
			// An array however many rules: one shape for scripts.
			return cli.WriteJSON(stdout, rows)
		case cli.CSV:
			header, table := fluidCSV(rows)
			return cli.WriteCSV(stdout, header, table)
		}
		return fluidTable(stdout, rows)
	}, *plotFile, func() *plot.Chart { return fluidChart(rows) })
}

// fluidCSV lays out one row per rule and k, with what the table shows: the
// share, each part's share and mean load (columns share_part_J and
// part_load_J, when a rule has parts), and with a capacity the overflow at
// this load and at each sizing utilization (overflow_u_0.70 …). The
// per-rule figures repeat on each of the rule's rows, as rule and d do.
func fluidCSV(rows []*fluidRow) ([]string, [][]string) {
	parts := 0
	for _, r := range rows {
		parts = max(parts, len(r.PartShareAtLeast))
	}
	header := []string{"rule", "d", "load", "k", "share_at_least"}
	for j := range parts {
		header = append(header, fmt.Sprintf("share_part_%d", j))
	}
	for j := range parts {
		header = append(header, fmt.Sprintf("part_load_%d", j))
	}
	capacity := rows[0].Capacity > 0
	if capacity {
		header = append(header, "capacity", "overflow")
		for _, u := range sizingUtilizations {
			header = append(header, "overflow_u_"+sizingKey(u))
		}
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
	var table [][]string
	for _, r := range rows {
		for k, s := range r.ShareAtLeast {
			line := []string{r.Rule, strconv.Itoa(r.D), strconv.FormatFloat(r.Load, 'g', -1, 64), strconv.Itoa(k), g(s)}
			for j := range parts {
				cell := ""
				if j < len(r.PartShareAtLeast) {
					cell = g(at(r.PartShareAtLeast[j], k))
				}
				line = append(line, cell)
			}
			for j := range parts {
				cell := ""
				if j < len(r.PartLoad) {
					cell = g(r.PartLoad[j])
				}
				line = append(line, cell)
			}
			if capacity {
				line = append(line, strconv.Itoa(r.Capacity), g(*r.Overflow))
				for _, u := range sizingUtilizations {
					line = append(line, g(r.Sizing[sizingKey(u)]))
				}
			}
			table = append(table, line)
		}
	}
	return header, table
}

func fluidTable(w io.Writer, rows []*fluidRow) error {
	fmt.Fprintf(w, "fluid limit at m = %.4g·n: share of bins with load ≥ k\n\n", rows[0].Load)
	header := []string{"load ≥ k"}
	top := 0
	for _, r := range rows {
		header = append(header, fmt.Sprintf("%s d=%d", r.Rule, r.D))
		for j := range r.PartShareAtLeast {
			header = append(header, fmt.Sprintf("part %d", j))
		}
		top = max(top, len(r.ShareAtLeast))
	}
	var table [][]string
	for k := 1; k < top; k++ {
		line := []string{strconv.Itoa(k)}
		for _, r := range rows {
			line = append(line, fmtLimit(at(r.ShareAtLeast, k)))
			for _, p := range r.PartShareAtLeast {
				line = append(line, fmtLimit(at(p, k)))
			}
		}
		table = append(table, line)
	}
	if err := cli.WriteTable(w, header, table); err != nil {
		return err
	}
	for _, r := range rows {
		if len(r.PartLoad) > 1 {
			fmt.Fprintf(w, "\n%s: mean load per part", r.Rule)
			for j, l := range r.PartLoad {
				fmt.Fprintf(w, "  %d: %.4f (%.2f%% of the balls)", j, l, 100*l/r.Load/float64(len(r.PartLoad)))
			}
			fmt.Fprintln(w)
		}
	}
	if rows[0].Capacity == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nbins of capacity %d: fraction of the balls that overflow\n\n", rows[0].Capacity)
	header = []string{"rule", "at this load"}
	for _, u := range sizingUtilizations {
		header = append(header, fmt.Sprintf("u = %.2f", u))
	}
	table = nil
	for _, r := range rows {
		line := []string{fmt.Sprintf("%s d=%d", r.Rule, r.D), fmtOverflow(*r.Overflow)}
		for _, u := range sizingUtilizations {
			line = append(line, fmtOverflow(r.Sizing[sizingKey(u)]))
		}
		table = append(table, line)
	}
	return cli.WriteTable(w, header, table)
}

func fmtOverflow(x float64) string {
	if x == 0 {
		return "0"
	}
	if x >= 0.01 {
		return fmt.Sprintf("%.3f", x)
	}
	return fmt.Sprintf("%.2g", x)
}

func fluidChart(rows []*fluidRow) *plot.Chart {
	c := &plot.Chart{Title: fmt.Sprintf("fluid limit, m = %.4g·n", rows[0].Load), XLabel: "load k", YLabel: "share of bins with load ≥ k", LogY: true}
	for i, r := range rows {
		col := plot.Palette[i%len(plot.Palette)]
		c.Series = append(c.Series, plot.Series{Name: fmt.Sprintf("%s d=%d", r.Rule, r.D), X: ks(len(r.ShareAtLeast)), Y: r.ShareAtLeast, Style: plot.Line, Color: col})
	}
	return c
}
