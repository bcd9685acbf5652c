// Package bucket holds what every balanced-allocation table in twochoice
// shares: the placement rules and the load histogram. The simulator and the
// store both call [Placement.Choose], so the rule a simulation measures is,
// line for line, the rule the store runs.
//
// # Terms
//
//   - A slot holds one key. A bucket (a bin, in the balls-into-bins papers)
//     is a fixed group of slots, C of them (its capacity); the table is n
//     buckets, and holds m keys (balls).
//   - A key's candidates are the d buckets it may live in, drawn from its hash
//     by the rule's scheme (see package hashfn). d is the number of choices.
//   - A part is one of d equal ranges of buckets (part k is
//     [⌊k·n/d⌋, ⌊(k+1)·n/d⌋), so sizes differ by one at most when d does
//     not divide n). Under [Halves] and [GoLeft] candidate k lies in part
//     k; under the other rules there is one part, the whole table.
//   - The load of a bucket is the number of keys in it; m/n is the mean
//     load, and m/(n·C) the utilization u. The share s_k is the fraction
//     of buckets with load ≥ k (s_0 = 1), the quantity the fluid limit
//     (package bucket/fluid) predicts; per part, the fraction of that
//     part's buckets.
//   - A new key goes to its least loaded candidate. A tie is two or more
//     candidates sharing that least load; the tie-break picks one of them:
//     a coin (each tied candidate equally likely, from random bits the caller
//     supplies) or, under [GoLeft], always the leftmost, the one in the
//     lowest-numbered part.
//   - The stash is a small overflow list for keys whose candidates are all
//     full. A table that has one keeps it small and checks it on every
//     lookup.
//
// # Invariant
//
// A key lives in one of its d candidate buckets or in the stash: never
// anywhere else, and never twice. Every lookup relies on it (it touches at
// most d buckets and the stash), and the store's invariant checker asserts
// it after every test.
//
// # Rules
//
//	rule        candidates               tie-break   max load at m = n
//	one         1, uniform               -           ln n / ln ln n
//	dchoice     d, independent uniform   coin        ln ln n / ln d + O(1)
//	halves      one per part             coin        as dchoice
//	goleft      one per part             leftmost    ln ln n / (d ln φ_d) + O(1)
//	double      f + k·g mod n            coin        as dchoice
//
// [Histogram] counts buckets by load, per part, and turns the counts into
// the shares that the fluid limit predicts.
package bucket
