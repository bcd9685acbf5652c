package corpus

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/twochoice/twochoice/bench/hitratio"
	"github.com/twochoice/twochoice/bench/workload"
)

// maxRequests bounds the requests of one workload, all held in memory
// (1 GiB of keys at the bound; P12 has 13.2 million): a trace line such as
// "0 1000000000000 0 0" stands for 10^12 requests. It is also below
// hitratio.MaxSequence.
var maxRequests = 1 << 27 // a variable so that a test can lower it

// loaded is a workload in memory, ready to replay.
type loaded struct {
	item     Item
	keys     []uint64                   // every request, a read of its key
	seq      *hitratio.Sequence[uint64] // next uses, for Belady's optimum
	warmup   int64                      // requests replayed before the counting starts
	distinct int                        // the keys capacities are shares of
}

// reads returns the requests counted.
func (l *loaded) reads() int64 { return int64(len(l.keys)) - l.warmup }

// window returns the counted reads of each of n windows of l's timeline
// (Config.Timeline), rounded up so that n windows hold them all, or 0,
// no timeline, for n = 0.
func (l *loaded) window(n int) int64 {
	if n <= 0 {
		return 0
	}
	return max((l.reads()+int64(n)-1)/int64(n), 1)
}

// load reads or generates it: a whole trace, or 2 × requests draws of a
// Zipf, aging or synthetic stream over keys ranks from seed, the first
// half not counted. A Zipf stream's capacities are shares of its keys, a
// trace's and the other streams' of the distinct keys they name (an aging
// stream's keys are born as it runs, a synthetic one's may be).
func load(ctx context.Context, it Item, keys uint64, requests int, seed uint64) (*loaded, error) {
	l := &loaded{item: it}
	if it.Generated() {
		var next func() uint64
		switch {
		case it.Kind != "":
			g, err := workload.NewSynthetic(it.Kind, keys, 2*uint64(requests), seed)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrConfig, err)
			}
			next = g.Next
		case it.Aging:
			a, err := workload.NewAging(it.S, keys, AgingStep, seed)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrConfig, err)
			}
			next = a.Next
		default:
			z, err := workload.NewZipf(it.S, keys, seed)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrConfig, err)
			}
			next = z.Next
		}
		l.keys = make([]uint64, 2*requests)
		for i := range l.keys {
			l.keys[i] = next()
		}
		l.warmup = int64(requests)
	} else {
		f, err := workload.OpenTrace(it.Path)
		if err != nil {
			return nil, err
		}
		l.keys, err = readKeys(ctx, f, it.Path)
		if err = errors.Join(err, f.Close()); err != nil {
			return nil, err
		}
	}
	seq, err := hitratio.NewReadSequence(l.keys)
	if err != nil {
		return nil, err
	}
	l.seq = seq
	l.distinct = seq.Distinct
	if it.Zipf() {
		l.distinct = int(keys) // every key the law can draw, drawn or not
	}
	return l, nil
}

// readKeys reads every request of a trace as its key.
func readKeys(ctx context.Context, w workload.Workload[uint64], path string) ([]uint64, error) {
	var keys []uint64
	buf := make([]workload.Request[uint64], workload.BatchSize)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := w.Read(buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		for _, q := range buf[:n] {
			keys = append(keys, q.Key)
		}
		if len(keys) > maxRequests {
			return nil, fmt.Errorf("%w: %s holds more than %d requests, which the corpus would keep in memory", ErrConfig, path, maxRequests)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: %s holds no request", workload.ErrEmpty, path)
	}
	return keys, nil
}
