// Package sim simulates balls into bins under every placement rule of
// package bucket, to measure what a rule, a hash function and a key set do
// to bucket loads, and to check the fluid limit (package bucket/fluid).
//
// # Terms
//
//   - A run throws m balls into n bins, one at a time: each ball gets its
//     candidates under the rule and goes to the least loaded, ties broken by
//     bucket.Placement.Choose (or Choose2), the code the store itself runs.
//   - m = c·n for any load factor c > 0 up to [MaxMeanLoad]; the share s_k
//     is the fraction of bins with load ≥ k at the end of a run, and a
//     simulation's shares are averaged over its runs (all runs have the
//     same n, so that is the share of all their bins together).
//   - An engine is how a run is computed. [Levels] follows the exact Markov
//     chain on "how many bins of each part hold each load", for the rules
//     whose candidates are uniform within their part (one, dchoice, halves,
//     goleft): its memory does not depend on n, which goes up to 2^40.
//     [Array] keeps every bin's load (a byte each, wider only when a load
//     could pass 255), up to 2^31 bins, for every rule including double
//     hashing and for key-driven runs.
//   - A key-driven run hashes real keys ([Keys]: sequential integers,
//     uniform random integers, a product set, or the keys of a file) with a
//     hashfn family into the rule's candidates, through the same
//     bucket.Placement.Generator the store uses. Other runs draw uniform
//     candidates, exactly (no modulo bias, whatever n).
//
// # Candidates are drawn with replacement
//
// A ball's d candidates are independent uniform draws (per part, for the
// rules with parts), so two of them may be the same bin, as in the
// balls-into-bins papers and as with d independent hash values. Double
// hashing is the exception: its d candidates are distinct by construction.
//
// # Randomness
//
// Everything random in run r of a simulation with seed s comes from one
// stream seeded with [RunSeed](s, r): the candidates, the coins, the keys of
// RandomKeys and the seed of the hash function of a key-driven run. Runs
// share nothing, so Run gives the same result for the same Config whatever
// Workers is and however the runs are scheduled, and [RunOne] replays any
// one run on its own.
//
// # Speed
//
// The levels engine goes ball by ball on small parts, keeping each part's
// bins sorted by load in a byte array so that a candidate's load is one
// byte load, 2 to 4 ns per ball (sorted.go), and a block of balls at a time
// on large ones, a fraction of a nanosecond per ball at 2^24 bins and
// beyond (blocks.go: the block's sure balls are one multinomial draw; the
// law is the chain's, up to floating point in the multinomial). Up to 2^14
// bins a worker runs two runs at once, alternating between their balls, so
// that each ball's wait on the last one's counter overlaps with the other
// run's (paired.go). The runs of a worker reuse their chains'
// memory. The array engine is bound by two cache misses per ball
// once the array outgrows the caches, and overlaps them by computing a
// batch of candidates ahead and prefetching their bins (array.go). The
// benchmarks compare it with a loop that does the same memory work without
// the decision.
package sim
