package hashfn

// SplitMix64 is the generator that fills tabulation tables and derives
// sub-seeds. It is Steele, Lea and Flood's SplitMix64 (OOPSLA 2014), as in
// java.util.SplittableRandom: the state advances by the golden-ratio
// constant and each output is the state passed through [Mix]. Its outputs
// for a seed are fixed forever: tables, and so every tabulation hash, are
// reproducible from the seed alone.
type SplitMix64 struct{ state uint64 }

// golden is 2^64 / φ, rounded to odd.
const golden = 0x9e3779b97f4a7c15

// NewSplitMix64 returns the generator started at seed.
func NewSplitMix64(seed uint64) SplitMix64 { return SplitMix64{state: seed} }

// Next returns the next 64-bit output.
func (g *SplitMix64) Next() uint64 {
	g.state += golden
	return Mix(g.state)
}

// Mix is SplitMix64's output function (Stafford's "variant 13" finalizer):
// a bijection on 64-bit words in which every input bit affects every output
// bit with probability close to 1/2.
func Mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Extend returns the j-th extension word of hash h (j ≥ 1), the source of
// candidate words 2j and 2j+1 when a key has more than two candidates. It is
// Mix(h + j·golden): a different bijection of h for each j, so extra
// candidates are as well spread as h itself. For [Tabulation] they are
// functions of one tabulation value and not independent tabulation
// functions; the two-choice guarantees of the family hold for candidates 0
// and 1, which use the halves of h directly.
func Extend(h uint64, j int) uint64 { return Mix(h + uint64(j)*golden) }
