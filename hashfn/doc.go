// Package hashfn holds the two seeded hash families of twochoice and the
// functions that turn one key's hash into its candidate buckets.
//
// # Terms
//
//   - A family is a way of hashing: [XXHash] (seeded xxHash64, modelled as a
//     random function) or [Tabulation] (simple tabulation of Pătraşcu and
//     Thorup, 3-independent and provably good for two choices).
//   - A seed picks one function of a family. The same family, seed and key
//     give the same hash on every machine and in every run, so a table or a
//     simulation can be replayed from its seed.
//   - The candidate stream of a 64-bit hash h is a sequence of 32-bit words:
//     word 0 is the low half of h, word 1 the high half, and words 2j and
//     2j+1 are the halves of [Extend](h, j). Candidate k of a key is made from
//     word k, so with d = 2 both candidates come straight from the family.
//   - Range reduction maps a 32-bit word w onto [0, n) as ⌊w·n / 2^32⌋
//     ([Reduce]), a multiply and a shift instead of a division. When n is a
//     power of two this is exact (it keeps the top bits of w); otherwise the
//     bias is at most n/2^32 per bucket. Candidates therefore need n ≤ 2^32.
//
// # Candidates
//
// [Generator] makes d candidates in [0, n) in one of three schemes:
// [Independent] (d words, each reduced onto the whole range), [Parts] (the
// range cut into d equal parts, candidate k reduced into part k) and [Double]
// (double hashing, f + k·g mod n, which needs n prime or a power of two so
// that the d candidates never repeat).
//
// # Allocation
//
// Hashing a string, a byte slice or an integer allocates nothing; tests check
// it with testing.AllocsPerRun.
package hashfn
