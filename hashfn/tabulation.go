package hashfn

// Tab is simple tabulation hashing (Pătraşcu and Thorup, "The Power of
// Simple Tabulation Hashing", JACM 2012). A 64-bit key x is cut into its 8
// bytes x_0 (lowest) … x_7, and
//
//	h(x) = T_0[x_0] ⊕ T_1[x_1] ⊕ … ⊕ T_7[x_7]
//
// where T_0 … T_7 are tables of 256 random 64-bit words. The tables are
// filled from the seed by [SplitMix64]: T_0[0], T_0[1], …, T_0[255], T_1[0],
// …, T_7[255] are its first 2048 outputs, in that order. The 2049th output
// is the seed of the fold below.
//
// Simple tabulation is 3-independent but not 4-independent. Its two 32-bit
// halves are two independent simple-tabulation functions (each is the XOR
// of the matching halves of the table words), which is the setting of
// Dahlgaard, Knudsen, Rotenberg and Thorup (SODA 2016): two choices with
// simple tabulation give a maximum load of O(lg lg n) with high probability.
//
// On a structured key set one function strays further from the average
// than a random function would, though the average is the same. h(x) ⊕ h(y)
// depends only on the bytes in which x and y differ (the linearity
// TestTabNotFourIndependent checks), so all the pairs of keys that differ
// in the same bytes in the same way land in one bucket together or not at
// all. In a product set {0, …, k-1}^8 such a class holds up to k^7 pairs: the
// number of colliding pairs keeps a random function's mean (pairs are
// uniform, the family being 2-independent) but, over b buckets, its
// variance is about Σ_s C(8,s)·C(k,2)^s·(k^(8-s)·2^(s-1))²/b, summed over
// the number s of differing bytes, instead of about the mean. For all of
// {0, …, 3}^8 hashed into 2^15 buckets (go-left's left part at 2^16 bins)
// that is a standard deviation of 10.8% of the mean, against 0.39% for a
// random function; 2000 tables measured 10.9% (and xxHash 0.39%). Runs
// whose tables happen to make more collisions reach higher loads: at 2^16
// bins under go-left, 3.7% of runs on these keys reach a maximum load of 4,
// against 0.6% with xxHash (docs/simulation.md, "Tabulation on structured
// keys"). The theory allows it: Dahlgaard, Knudsen, Rotenberg and Thorup (SODA 2016,
// arXiv:1407.6846) prove a maximum load of O(lg lg n) with high
// probability and lg lg n + O(1) only in expectation, and give a key set
// on which lg lg n + O(1) does not hold with high probability; Aamand,
// Knudsen and Thorup (arXiv:1804.09684) prove the same expectations for d
// choices and for go-left. Uniform random keys show none of this.
//
// Strings and byte slices are first folded to 64 bits with xxHash64 under a
// seed of their own, then tabulated. Why the guarantees survive: every
// statement about simple tabulation holds for any fixed set of distinct
// 64-bit keys. The fold's seed is drawn independently of the tables, so
// the folded set is fixed before the tables are looked at, and the folded
// keys are distinct unless two keys collide in 64 bits, which for m keys
// happens with probability at most m²/2^65 (below 3·10⁻⁸ for a million
// keys). Colliding keys simply share their candidates; a table that compares
// full keys stays correct.
//
// The tables take 16 KiB, which fits in a core's L1 data cache.
type Tab struct {
	t    [8][256]uint64
	fold XXH
	seed uint64
}

// NewTab builds the tables for seed.
func NewTab(seed uint64) *Tab {
	g := NewSplitMix64(seed)
	tb := &Tab{seed: seed}
	for i := range tb.t {
		for j := range tb.t[i] {
			tb.t[i][j] = g.Next()
		}
	}
	tb.fold = NewXXH(g.Next())
	return tb
}

// Kind returns Tabulation.
func (*Tab) Kind() Kind { return Tabulation }

// Seed returns the seed the tables were filled from.
func (tb *Tab) Seed() uint64 { return tb.seed }

// Uint64 tabulates the 8 bytes of x.
func (tb *Tab) Uint64(x uint64) uint64 {
	// Indexing [256]uint64 with a byte needs no bounds check.
	return tb.t[0][uint8(x)] ^ tb.t[1][uint8(x>>8)] ^
		tb.t[2][uint8(x>>16)] ^ tb.t[3][uint8(x>>24)] ^
		tb.t[4][uint8(x>>32)] ^ tb.t[5][uint8(x>>40)] ^
		tb.t[6][uint8(x>>48)] ^ tb.t[7][uint8(x>>56)]
}

// String folds s to 64 bits with xxHash64 and tabulates the result.
func (tb *Tab) String(s string) uint64 { return tb.Uint64(tb.fold.String(s)) }

// Bytes folds b to 64 bits with xxHash64 and tabulates the result.
func (tb *Tab) Bytes(b []byte) uint64 { return tb.Uint64(tb.fold.Bytes(b)) }
