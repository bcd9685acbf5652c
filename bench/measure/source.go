package measure

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/workload"
	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/keyset"
)

// source holds a run's requests, generated or read before anything is
// measured, so that no measure times the generator or a file's decoding.
type source[K caches.Key] struct {
	name string // the workload's name, with its seed
	// replay is the hit-ratio stream; its first warmup requests are not
	// counted.
	replay []workload.Request[K]
	warmup int64
	// streams returns the timed runs' streams for g goroutines, each of n
	// requests for a generator (a file's are the whole file).
	streams func(g, n int) ([]Stream[K], error)
	// keys returns n distinct keys for the memory fills.
	keys func(n int) []K
	// distinct is the number of distinct keys of the workload: all keys a
	// generator can draw, or those a file holds.
	distinct int
	// gen, for a generator, makes its stream from a seed; build uses it.
	gen  func(seed uint64) (workload.Workload[K], error)
	seed uint64
	// arena holds the requests; free releases them.
	arena arena[K]
}

// Lengths of the generated streams.
const (
	// minReplayWarmup is the least warm-up of a generator's hit-ratio
	// replay by default (see Config.Warmup).
	minReplayWarmup = 1 << 19
	// streamLen is the length of each goroutine's stream in a timed run
	// of 250 ms or less (it wraps around); see streamLength.
	streamLen = 1 << 20
)

// streamSeed is the seed of goroutine g's stream: the run's seed itself
// for goroutine 0, whose stream is then the start of the hit-ratio replay,
// and a SplitMix64 mix of it for the others, so that nearby seeds give
// unrelated streams.
func streamSeed(seed uint64, g int) uint64 {
	if g == 0 {
		return seed
	}
	return hashfn.Mix(seed + uint64(g)*0x9e3779b97f4a7c15)
}

// streamLength returns the length of each of g streams for timed runs of
// duration d: 2^20 requests per 250 ms, so that a fast cache replays its
// stream a few times at most (a stream replayed many times is easier on a
// cache than the workload it stands for), up to 2^23 a stream and 2^25 in
// all (512 MiB of integer requests), and at least 2^16.
func streamLength(g int, d time.Duration) int {
	n := streamLen * min(max(int(d/(250*time.Millisecond)), 1), 8)
	return max(1<<16, min(n, (32*streamLen)/g))
}

// newUintSource builds the source of a workload with integer keys.
func newUintSource(sp Spec, seed uint64) (*source[uint64], error) {
	src := &source[uint64]{keys: func(n int) []uint64 {
		k := make([]uint64, n)
		for i := range k {
			k[i] = uint64(i)
		}
		return k
	}}
	switch sp.Kind {
	case Zipf, Uniform:
		gen := func(seed uint64) (workload.Workload[uint64], error) {
			if sp.Kind == Zipf {
				return workload.NewZipf(sp.S, sp.Keys, seed)
			}
			return workload.NewUniform(sp.Keys, seed)
		}
		src.gen, src.seed, src.distinct = gen, seed, distinctOf(sp.Keys)
		return src, nil
	case Scan:
		s, err := workload.NewScan(sp.Keys)
		if err != nil {
			return nil, err
		}
		if err := checkScanKeys(sp.Keys); err != nil {
			return nil, err
		}
		src.gen = func(uint64) (workload.Workload[uint64], error) { return workload.NewScan(sp.Keys) }
		src.seed, src.distinct = seed, int(sp.Keys)
		cycle, _ := src.arena.collect(s, int(sp.Keys))
		src.streams = offsets(cycle)
		return src, nil
	case Trace:
		f, err := workload.OpenTrace(sp.Path)
		if err != nil {
			return nil, err
		}
		return src, src.readFile(f, sp.Path)
	}
	return nil, fmt.Errorf("%w: %v has string keys", ErrWorkload, sp.Kind)
}

// maxScanKeys bounds a scan's keys: one cycle of them is held in memory.
const maxScanKeys = math.MaxInt32

// checkScanKeys refuses a scan over more than maxScanKeys keys.
func checkScanKeys(keys uint64) error {
	if keys > maxScanKeys {
		return fmt.Errorf("%w: a scan over %d keys is held in memory; at most 2^31-1", ErrWorkload, keys)
	}
	return nil
}

// maxFileRequests bounds the requests a trace or key file may expand to:
// they are all held in memory (about 2 GiB of uint64 requests at the
// bound; the P12 trace has 13 million). A line such as "0 1000000000000 0
// 0" in an ARC trace stands for 10^12 requests and would otherwise run the
// process out of memory.
var maxFileRequests = 1 << 27 // a variable so that a test can lower it

// readFile reads every request of the opened trace or key file f (at
// path), closes it, and makes them the source's requests (fromFile).
func (s *source[K]) readFile(f *workload.File[K], path string) error {
	reqs, err := workload.Collect[K](f, maxFileRequests+1)
	if err = errors.Join(err, f.Close()); err != nil {
		return err
	}
	if len(reqs) > maxFileRequests {
		return fmt.Errorf("%w: %s holds more than %d requests, which the harness would keep in memory", ErrWorkload, path, maxFileRequests)
	}
	s.name = f.Name()
	return s.fromFile(reqs)
}

// newStringSource builds the source of a workload with string keys.
func newStringSource(sp Spec, seed uint64) (*source[string], error) {
	src := &source[string]{keys: func(n int) []string { return keyset.Synthetic(n, seed) }}
	switch sp.Kind {
	case Keys:
		f, err := workload.OpenKeys(sp.Path)
		if err != nil {
			return nil, err
		}
		return src, src.readFile(f, sp.Path)
	case Weighted:
		w, err := workload.ReadWeighted(sp.Path, seed)
		if err != nil {
			return nil, err
		}
		src.gen = func(seed uint64) (workload.Workload[string], error) { return w.Reseed(seed), nil }
		src.seed, src.distinct = seed, w.Drawable() // keys of weight 0 are never requested
		return src, nil
	}
	return nil, fmt.Errorf("%w: %v has integer keys", ErrWorkload, sp.Kind)
}

// build makes a generator's requests: a replay of 2·warmup requests, the
// first half not counted, and (unless set already) one stream per
// goroutine, each from its own seed. A file's requests are read already,
// and build does nothing.
func (s *source[K]) build(warmup int) error {
	if s.gen == nil {
		return nil
	}
	gen, seed := s.gen, s.seed
	w, err := gen(seed)
	if err != nil {
		return err
	}
	s.name = w.Name()
	s.warmup = int64(warmup)
	if s.replay, err = s.arena.collect(w, int(2*s.warmup)); err != nil {
		return err
	}
	if s.streams != nil {
		return nil
	}
	s.streams = func(g, n int) ([]Stream[K], error) {
		out := make([]Stream[K], g)
		for i := range out {
			if i == 0 && len(s.replay) >= n {
				out[i] = Stream[K]{Reqs: s.replay[:n]}
				continue
			}
			w, err := gen(streamSeed(seed, i))
			if err != nil {
				return nil, err
			}
			reqs, err := s.arena.collect(w, n)
			if err != nil {
				return nil, err
			}
			out[i] = Stream[K]{Reqs: reqs}
		}
		return out, nil
	}
	return nil
}

// fromFile fills the source from a finite trace or key file: the replay is
// the whole file, every request counted, as in the ARC paper's tables; the
// goroutines of a timed run share it, each starting at its own place.
func (s *source[K]) fromFile(reqs []workload.Request[K]) error {
	if len(reqs) == 0 {
		return fmt.Errorf("%w: %s holds no request", workload.ErrEmpty, s.name)
	}
	s.replay = s.arena.clone(reqs)
	s.streams = offsets(s.replay)
	seen := make(map[K]struct{})
	for _, q := range reqs {
		seen[q.Key] = struct{}{}
	}
	s.distinct = len(seen)
	return nil
}

// distinctOf clamps a generator's key count to an int.
func distinctOf(n uint64) int { return int(min(n, math.MaxInt)) }

// offsets returns streams over reqs that start g equal parts apart.
func offsets[K caches.Key](reqs []workload.Request[K]) func(g, n int) ([]Stream[K], error) {
	return func(g, _ int) ([]Stream[K], error) {
		out := make([]Stream[K], g)
		for i := range out {
			out[i] = Stream[K]{Reqs: reqs, Start: int(int64(i) * int64(len(reqs)) / int64(g))}
		}
		return out, nil
	}
}
