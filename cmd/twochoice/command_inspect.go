package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"time"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/cli"
	"github.com/twochoice/twochoice/internal/plot"
	"github.com/twochoice/twochoice/internal/snapshot"
)

func init() {
	register(command{"inspect", "print a snapshot's metadata and bucket load next to the fluid limit", runInspect})
}

const inspectSynopsis = `inspect SNAP [flags]

Reads a snapshot written by "twochoice load" or a store's Save, without
knowing its Go key and value types: checks every record against the
metadata (count, checksum, the bucket each record names), then prints the
metadata (with the shapes of the key and value types, which OpenMap and
OpenCache check) and the bucket occupancy histogram next to the fluid limit for
the same rule, d, bucket size and keys per bucket. A bounded cache's
snapshot has no fluid columns: its buckets fill up and evict, which the
limit of keys that arrive and stay does not describe.

Examples:
  twochoice inspect keys.snap
  twochoice inspect keys.snap --format json
  twochoice inspect keys.snap --plot load.svg`

func runInspect(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("inspect", inspectSynopsis)
	var (
		plotFile = fs.String("plot", "", "write a chart of the bucket shares and the fluid limit to FILE.svg or FILE.png")
		quiet    = fs.Bool("quiet", false, "no progress bar")
		format   = cli.Table
	)
	fs.Var(summaryFormatFlag{&format}, "format", "output: table or json")
	// The snapshot may come before the flags, as in the synopsis.
	var path string
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		path, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if path == "" && fs.NArg() > 0 {
		path = fs.Arg(0)
		if err := parseFlags(fs, fs.Args()[1:]); err != nil {
			return err
		}
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	case path == "":
		return fmt.Errorf("%w: no snapshot file given", errUsage)
	}
	if err := checkPlot(*plotFile); err != nil {
		return err
	}
	// Reading a large snapshot takes seconds: Ctrl-C stops it, and says so.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	r, err := snapshot.Open(path, 0)
	if err != nil {
		return interrupted(ctx, err)
	}
	defer r.Close()
	m := r.Meta()
	sum, err := inspectSummary(ctx, r, &m, stderr, *quiet)
	if err != nil {
		return interrupted(ctx, err)
	}
	return printThenPlot(func() error { return inspectPrint(stdout, path, &m, sum, format) }, *plotFile, func() *plot.Chart {
		return sum.chart(fmt.Sprintf("%s: %d keys, %s d=%d, buckets of %d", path, sum.Entries, sum.Placement, sum.Choices, sum.BucketSize))
	})
}

// inspectPrint prints what inspect found: the summary as JSON, or the
// metadata and the table.
func inspectPrint(stdout io.Writer, path string, m *snapshot.Meta, sum *snapSummary, format cli.Format) error {
	if format == cli.JSON {
		return cli.WriteJSON(stdout, sum)
	}
	fmt.Fprintf(stdout, "snapshot %s\n", path)
	fmt.Fprintf(stdout, "format version %d, created %s\n", m.Version, m.CreatedTime().UTC().Format(time.RFC3339Nano))
	fmt.Fprintf(stdout, "key type %s, value type %s, max entries %d (0: unbounded), checksum %#016x\n", m.KeyType, m.ValueType, m.MaxEntries, m.Checksum)
	// In the table only: the JSON is the summary that load prints too,
	// with the same fields, so that scripts read both alike.
	if m.KeyDesc != nil && m.ValueDesc != nil {
		fmt.Fprintf(stdout, "key shape %s\nvalue shape %s\n", m.KeyDesc, m.ValueDesc)
	} else {
		fmt.Fprintln(stdout, "key and value shapes not recorded (saved before they were): Open checks the type names alone")
	}
	return sum.writeTable(stdout)
}

// inspectSummary reads every record of the snapshot (ForEach checks their
// count and checksum), counts the records per bucket, checks that count
// against the metadata's histogram, and builds the summary. It stops with
// ctx's error once ctx is done.
func inspectSummary(ctx context.Context, r *snapshot.Reader, m *snapshot.Meta, stderr io.Writer, quiet bool) (*snapSummary, error) {
	rule, err := bucket.ParsePlacement(m.Placement)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w: placement: %v", r.Path(), snapshot.ErrCorrupt, err)
	}
	if err := rule.CheckChoices(m.Choices); err != nil || m.BucketSize < 1 || m.BucketSize > 8 {
		return nil, fmt.Errorf("snapshot %s: %w: choices %d, bucket size %d", r.Path(), snapshot.ErrCorrupt, m.Choices, m.BucketSize)
	}
	gen, err := rule.Generator(m.Buckets, m.Choices)
	if err != nil || len(m.Histogram) != rule.Parts(m.Choices) {
		return nil, fmt.Errorf("snapshot %s: %w: table of %d buckets, histogram of %d parts", r.Path(), snapshot.ErrCorrupt, m.Buckets, len(m.Histogram))
	}
	// The snapshot reader has checked that the histogram counts the
	// table's buckets and the entries, and that the file holds that many.
	loads := newBucketLoads(m.Buckets, m.Entries)
	var stash, n uint64
	bar := cli.NewProgress(stderr, "inspect", quiet)
	defer bar.Done()
	done := ctx.Done()
	err = r.ForEach(func(rec []byte) error {
		select {
		case <-done:
			return ctx.Err()
		default:
		}
		a, err := snapshot.DecodeAny(rec)
		if err != nil {
			return fmt.Errorf("snapshot %s: record %d: %w", r.Path(), n, err)
		}
		switch {
		case a.Bucket == snapshot.StashBucket:
			stash++
		case a.Bucket < 0 || uint64(a.Bucket) >= m.Buckets || int(loads.get(uint64(a.Bucket))) >= m.Slots():
			return fmt.Errorf("snapshot %s: record %d: %w: bucket %d (table of %d buckets of %d)", r.Path(), n, snapshot.ErrCorrupt, a.Bucket, m.Buckets, m.Slots())
		default:
			loads.add(uint64(a.Bucket))
		}
		n++
		if n%(1<<16) == 0 {
			bar.Update(float64(n)/float64(max(m.Entries, 1)), fmt.Sprintf("%d records", n))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	parts := loads.histogram(&gen, len(m.Histogram), m.Slots())
	for p := range parts {
		if !slices.Equal(parts[p], m.Histogram[p]) || stash != m.Stash {
			return nil, fmt.Errorf("snapshot %s: %w: the records give loads %v and stash %d, the metadata %v and %d",
				r.Path(), snapshot.ErrCorrupt, parts[p], stash, m.Histogram[p], m.Stash)
		}
	}
	sum, err := newSnapSummary(parts, stash, rule, m.Choices, m.BucketSize, m.Hash, m.Seed, m.MaxEntries > 0)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w: %v", r.Path(), snapshot.ErrCorrupt, err)
	}
	return sum, nil
}

// bucketLoads counts the records of each bucket of a snapshot's table: in
// one byte per bucket (a bucket holds at most 8), or, for a table far
// larger than its records, in a map of the buckets they name. A store's
// table never shrinks, so a store that grew and then lost most of its keys
// is saved with a table of up to 2^32 buckets beside a few records (and a
// doctored file can claim one): inspect's memory follows the records,
// which the file's size bounds, not the table size.
type bucketLoads struct {
	dense  []uint8
	sparse map[uint64]uint8
}

func newBucketLoads(buckets, records uint64) *bucketLoads {
	if buckets <= max(1<<20, 8*records) {
		return &bucketLoads{dense: make([]uint8, buckets)}
	}
	return &bucketLoads{sparse: make(map[uint64]uint8)}
}

func (l *bucketLoads) get(b uint64) uint8 {
	if l.dense != nil {
		return l.dense[b]
	}
	return l.sparse[b]
}

func (l *bucketLoads) add(b uint64) {
	if l.dense != nil {
		l.dense[b]++
	} else {
		l.sparse[b]++
	}
}

// histogram returns, per part of gen, the number of buckets of each load
// 0 to slots.
func (l *bucketLoads) histogram(gen *hashfn.Generator, parts, slots int) [][]uint64 {
	if l.dense == nil {
		return snapshot.SparseHistogram(gen, parts, slots, l.sparse)
	}
	h := make([][]uint64, parts)
	for p := range h {
		h[p] = make([]uint64, slots+1)
	}
	for i, c := range l.dense {
		h[gen.PartOf(uint64(i))][c]++
	}
	return h
}
