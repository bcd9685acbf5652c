package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/internal/cli"
	"github.com/twochoice/twochoice/store"
)

func init() {
	register(command{"load", "build a store from a key file, print its load report and save a snapshot", runLoad})
}

const loadSynopsis = `load --keys FILE --out SNAP [--format json [--show-seed]] [flags]

Reads keys from FILE, one per line (or the first column of a
tab-separated file; empty keys are skipped; Zstandard files are
decompressed; - is standard input; every command reads key files this
way), stores each with
its line number as the value (a key seen twice keeps its last line),
prints the store's bucket load next to the fluid limit, and saves the
store as a snapshot to SNAP (see "twochoice inspect"). With
--size-hint N the table starts at the size a store of N entries grows
to, so the report shows how the keys spread over a table planned for N;
with --growth F the table grows by F instead of 2, which leaves it fuller
(a report after a growth by 1.5 shows utilization up to a third higher).
Ctrl-C stops the read or abandons the save, leaving SNAP as it was.
SNAP may replace only a snapshot (through a symbolic link, the file it
points to), checked before the load and again when the snapshot takes
its place: if SNAP has meanwhile become a link elsewhere or a file that
is not a snapshot, load fails and leaves it as it is. The JSON report's
seed is null unless --show-seed (whoever knows the seed can choose keys
that collide); the table gives it, the snapshot keeps it, and "twochoice
inspect SNAP" shows it.

Examples:
  twochoice load --keys keys.txt --out keys.snap
  twochoice load --keys keys.txt --out keys.snap --size-hint 1000000
  twochoice load --keys keys.txt --out keys.snap --growth 1.5
  twochoice load --keys trace.tsv --placement dchoice --choices 3 --out t.snap --format json`

func runLoad(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("load", loadSynopsis)
	var (
		keysPath = fs.String("keys", "", "key file: one key per line, or TSV with the key first; - for standard input (required)")
		out      = fs.String("out", "", "snapshot file to write (required)")
		opts     = addStoreFlags(fs, 1, "hash seed")
		sizeHint = fs.Int("size-hint", 0, "entries to size the table for up front, as make's hint sizes a map (0: start small and grow)")
		growth   = fs.Float64("growth", 0, fmt.Sprintf("factor the table grows by when it passes its threshold, %v to %v (0: %v)", store.MinGrowth, store.MaxGrowth, store.DefaultGrowth))
		quiet    = fs.Bool("quiet", false, "no progress bar")
		showSeed = fs.Bool("show-seed", false, "give the hash seed in the JSON report (null without; the snapshot keeps it, and inspect shows it)")
		format   = cli.Table
	)
	fs.Var(summaryFormatFlag{&format}, "format", "output: table or json")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	case *keysPath == "":
		return fmt.Errorf("%w: --keys is required", errUsage)
	case *out == "":
		return fmt.Errorf("%w: --out is required", errUsage)
	case *opts.seed == 0:
		return fmt.Errorf("%w: --seed 0: want a seed > 0", errUsage)
	case *sizeHint < 0 || *sizeHint > store.MaxSizeHint:
		return fmt.Errorf("%w: --size-hint %d: want 0 to %d", errUsage, *sizeHint, store.MaxSizeHint)
	case *growth != 0 && !(*growth >= store.MinGrowth && *growth <= store.MaxGrowth):
		return fmt.Errorf("%w: --growth %v: want %v to %v, or 0 for %v", errUsage, *growth, store.MinGrowth, store.MaxGrowth, store.DefaultGrowth)
	}
	if err := opts.check(fs); err != nil {
		return err
	}
	pin, err := checkSnapshotOut(*out, *keysPath)
	if err != nil {
		return err
	}
	o := opts.options()
	if o.Placement == bucket.OneChoice && o.Choices == store.DefaultChoices {
		o.Choices = 1
	}
	o.SizeHint, o.Growth = *sizeHint, *growth
	s, err := store.NewMap[string, uint64](o)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	// Ctrl-C (or SIGTERM) stops the read or abandons the save, which
	// removes its temporary file and leaves --out as it was.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := loadKeys(ctx, s, *keysPath, stderr, *quiet); err != nil {
		return interrupted(ctx, err)
	}
	r := s.Report()
	sum, err := newSnapSummary([][]uint64{r.Histogram}, uint64(r.Stash), r.Placement, r.Choices, r.BucketSize, r.Hash.String(), r.Seed, r.MaxEntries > 0)
	if err != nil {
		return err
	}
	if !*showSeed {
		sum.Seed = nil
	}
	bar := cli.NewProgress(stderr, "save", *quiet)
	err = saveSnapshot(ctx, s, *out, pin, func(done, total uint64) {
		bar.Update(float64(done)/float64(total), fmt.Sprintf("%d/%d buckets", done, total))
	})
	bar.Done()
	if err != nil {
		return interrupted(ctx, err)
	}
	// A Ctrl-C that came once the file was complete did not stop its
	// commit: the snapshot is saved, and reported as such.
	stop()
	if format == cli.JSON {
		err = cli.WriteJSON(stdout, sum)
	} else {
		_, err = fmt.Fprintf(stdout, "%v\nsaved %d entries to %s\n", r, r.Entries, *out)
	}
	if err != nil {
		return fmt.Errorf("the snapshot is saved, but its report could not be printed: %w", err)
	}
	return nil
}

// loadKeys sets every key of the file, with its line number as the value.
// It reads the file with scanKeyFile, as serve does: Ctrl-C stops it, and
// a file without a key is an error (its snapshot would be of an empty
// store, most likely from the wrong file).
func loadKeys(ctx context.Context, s *store.Map[string, uint64], path string, stderr io.Writer, quiet bool) error {
	bar := cli.NewProgress(stderr, "load", quiet)
	defer bar.Done()
	return scanKeyFile(ctx, path, func(frac float64) {
		bar.Update(frac, fmt.Sprintf("%d keys", s.Len()))
	}, func(line int, key []byte) {
		s.Set(string(key), uint64(line))
	})
}
