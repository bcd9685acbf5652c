package sim

import (
	"fmt"
	"testing"

	"github.com/twochoice/twochoice/bucket"
)

// memoryWork is the peer the array engine is measured against: per ball it
// does the same memory work without the decision. It computes both
// candidates as the engine does (one word, two ranks), reads both bytes and
// increments the first.
func memoryWork(bins []uint8, m uint64, g *stream) uint8 {
	k := uint(0)
	for uint64(1)<<k < uint64(len(bins)) {
		k++
	}
	sh := (64 - k) & 63
	k &= 63
	s := g.s
	var sink uint8
	for range m {
		s += golden
		u := mix(s)
		c0, c1 := u>>sh, (u<<k)>>sh
		x, y := bins[c0], bins[c1]
		bins[c0] = x + 1
		sink += y
	}
	g.s = s
	return sink
}

var sinkByte uint8

// bigArrays holds one array per size across sub-benchmarks, faulted in
// once, so that page faults are not what is timed.
var bigArrays = map[int][]uint8{}

func bigArray(lg int) []uint8 {
	a, ok := bigArrays[lg]
	if !ok {
		var err error
		if a, _, err = allocBins[uint8](1 << lg); err != nil {
			panic(err)
		}
		for i := range a {
			a[i] = 1
		}
		bigArrays[lg] = a
	}
	return a
}

// BenchmarkArray compares, per ball, the array engine (two-choice, coin
// tie-break) with the same memory work without the decision, at 2^28 and
// 2^30 bins (2^16 with -short). The target: engine ≤ 1.25 × peer.
// Run with a fixed -benchtime such as 16777216x; one op is one ball.
// BenchmarkArrayBatch times the array engine at 2^28 bins for several
// batch sizes (how far ahead candidates are touched); 64 was chosen with it.
func BenchmarkArrayBatch(b *testing.B) {
	lg := 28
	if testing.Short() {
		lg = 16
	}
	for _, ab := range []int{8, 16, 32, 64, 128, 256} {
		b.Run(fmt.Sprint(ab), func(b *testing.B) {
			old := arrayBatch
			arrayBatch = ab
			defer func() { arrayBatch = old }()
			bins := bigArray(lg)
			src, _ := newCandidates(bucket.DChoice, 2, uint64(len(bins)), nil)
			a := newArrayRun(bins, bucket.DChoice, 2, src)
			g := newStream(1)
			b.ResetTimer()
			_ = a.throw(uint64(b.N), &g)
		})
	}
}

func BenchmarkArray(b *testing.B) {
	sizes := []int{28, 30}
	if testing.Short() {
		sizes = []int{16}
	}
	for _, lg := range sizes {
		b.Run(fmt.Sprintf("n=2^%d/memwork", lg), func(b *testing.B) {
			bins := bigArray(lg)
			g := newStream(1)
			b.ResetTimer()
			sinkByte += memoryWork(bins, uint64(b.N), &g)
		})
		for _, rule := range []bucket.Placement{bucket.DChoice, bucket.GoLeft} {
			b.Run(fmt.Sprintf("n=2^%d/%v", lg, rule), func(b *testing.B) {
				bins := bigArray(lg)
				src, err := newCandidates(rule, 2, uint64(len(bins)), nil)
				if err != nil {
					b.Fatal(err)
				}
				a := newArrayRun(bins, rule, 2, src)
				g := newStream(1)
				b.ResetTimer()
				_ = a.throw(uint64(b.N), &g)
			})
		}
	}
}
