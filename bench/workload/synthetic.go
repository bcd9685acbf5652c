package workload

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
)

// Synthetic is a finite workload of read requests with a shape that a
// fixed Zipf law lacks and real traces show: popularity that drifts,
// working sets that change and come back, a loop beside hot keys, scans
// and one-off keys among hot ones. Each kind is built over n keys, so a
// kind keeps its shape at any size; keys of the Zipf parts are ranks, 0
// the most popular.
//
//	kind     requests
//	drift    Zipf 0.8 over a window of n keys whose most popular key moves
//	         on by one key every 10 requests: a key is born unpopular,
//	         rises to the top and is then never asked for again
//	phases   four phases of a quarter of the requests each, working sets
//	         A, B, A, C: Zipf 0.9 over n keys of the phase's own
//	mixloop  60% Zipf 1.0 over n keys, 40% a loop over 2n/5 other keys
//	zscan    Zipf 0.9 over n keys, and every n/5 requests a scan of n/20
//	         keys never asked for before (a database's table scans)
//	oneoffs  half Zipf 1.2 over n keys, half keys never asked for before
//	         (frequency decides, as in TinyLFU's admission)
//	uniform  uniform draws over n keys (no policy can do better than
//	         another: a control)
//
// No cache's parameters are taken from these kinds: they are there to
// measure a policy on shapes it was not built on (bench --corpus).
type Synthetic struct {
	shape         int // the kind's index in SyntheticKinds, which Next switches on
	n, total      uint64
	seed          uint64
	i             uint64 // requests drawn
	z             *Zipf
	rng           *rand.Rand
	next          uint64 // the next key never asked for before (zscan, oneoffs)
	loop, scanned uint64 // mixloop's position; zscan's keys of the scan under way
}

// SyntheticKinds are the kinds of Synthetic, in the order bench lists
// them.
var SyntheticKinds = []string{"drift", "phases", "mixloop", "zscan", "oneoffs", "uniform"}

// The kinds' indices in SyntheticKinds: Next switches on an integer, not
// on the kind's name, once per request.
const (
	shapeDrift = iota
	shapePhases
	shapeMixloop
	shapeZscan
	shapeOneoffs
	shapeUniform
)

// syntheticStream is the PCG stream of a Synthetic's own draws (the
// loop's and the one-offs' turns); its Zipf part has a stream of its own.
const syntheticStream = 0x73796e74 // "synt"

// syntheticExponents are the Zipf exponents of the kinds (see Synthetic).
var syntheticExponents = map[string]float64{
	"drift": 0.8, "phases": 0.9, "mixloop": 1.0, "zscan": 0.9, "oneoffs": 1.2,
}

// NewSynthetic returns total requests of the given kind (one of
// SyntheticKinds) over n keys, with 20 ≤ n ≤ 2^40 and total ≥ 1, drawn
// from seed.
func NewSynthetic(kind string, n, total, seed uint64) (*Synthetic, error) {
	shape := slices.Index(SyntheticKinds, kind)
	if shape < 0 {
		return nil, fmt.Errorf("%w: synthetic kind %q, want one of %v", ErrParam, kind, SyntheticKinds)
	}
	if n < 20 || n > 1<<40 {
		return nil, fmt.Errorf("%w: synthetic over %d keys, want 20 to 2^40", ErrParam, n)
	}
	if total < 1 {
		return nil, fmt.Errorf("%w: synthetic of 0 requests", ErrParam)
	}
	s := &Synthetic{shape: shape, n: n, total: total, seed: seed, rng: rand.New(rand.NewPCG(seed, syntheticStream))}
	if e, ok := syntheticExponents[kind]; ok {
		z, err := NewZipf(e, n, seed)
		if err != nil {
			return nil, err
		}
		s.z = z
	}
	// Keys never asked for before (and the loop's) come after every
	// key the Zipf part can draw; under phases, the sets are n apart.
	s.next = n
	return s, nil
}

// Name returns "synthetic(kind=K,n=N,requests=R,seed=SEED)".
func (s *Synthetic) Name() string {
	return fmt.Sprintf("synthetic(kind=%s,n=%d,requests=%d,seed=%d)", SyntheticKinds[s.shape], s.n, s.total, s.seed)
}

// Next returns the next key; past the last request it keeps drawing as
// if the stream went on.
func (s *Synthetic) Next() uint64 {
	i := s.i
	s.i++
	switch s.shape {
	case shapeDrift:
		return i/10 + s.n - 1 - s.z.Next()
	case shapePhases:
		set := [4]uint64{0, 1, 0, 2}[min(4*i/s.total, 3)]
		return set*s.n + s.z.Next()
	case shapeMixloop:
		if s.rng.Uint64N(10) < 4 {
			k := s.n + s.loop%(2*s.n/5)
			s.loop++
			return k
		}
		return s.z.Next()
	case shapeZscan:
		if s.scanned > 0 {
			s.scanned--
			return s.fresh()
		}
		if i%(s.n/5) == 0 {
			s.scanned = s.n/20 - 1
			return s.fresh()
		}
		return s.z.Next()
	case shapeOneoffs:
		if s.rng.Uint64()&1 == 0 {
			return s.fresh()
		}
		return s.z.Next()
	}
	return s.rng.Uint64N(s.n) // shapeUniform
}

// fresh returns a key never returned before.
func (s *Synthetic) fresh() uint64 {
	k := s.next
	s.next++
	return k
}

// Read fills reqs with read requests, up to the stream's total, then
// returns io.EOF.
func (s *Synthetic) Read(reqs []Request[uint64]) (int, error) {
	n := 0
	for ; n < len(reqs) && s.i < s.total; n++ {
		reqs[n] = Request[uint64]{Key: s.Next()}
	}
	if n == 0 && len(reqs) > 0 {
		return 0, io.EOF
	}
	return n, nil
}
