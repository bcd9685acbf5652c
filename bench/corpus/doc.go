// Package corpus replays a corpus of workloads, every block trace of a
// folder and generated Zipf, aging and synthetic streams, against every
// bounded cache at capacities given as shares of each workload's distinct
// keys, and sums up how the bounded twochoice store does against the best
// of the other caches and against Belady's optimum. It is the instrument
// for tuning the store's eviction policy: one command, one table, one
// summary.
//
// # Terms
//
//   - A workload is one item of the corpus ([Item]): a trace (ARC or
//     LIRS format, told apart by its first line as workload.OpenTrace
//     does, compressed with zstd or not), a Zipf stream over Config.Keys
//     keys, or an aging stream (workload.Aging: the same law over
//     Config.Keys ranks counted back from the newest key, a key born
//     every AgingStep requests), or a synthetic stream (workload.Synthetic:
//     drift, phases, mixloop, zscan, oneoffs or uniform over Config.Keys
//     keys), shapes that a fixed law lacks and that no constant of the
//     store was chosen on.
//   - A row is a workload at one capacity. Capacities are shares of the
//     workload's distinct keys (or entries), rounded to the nearest entry
//     as bench rounds them (measure.Capacity.Resolve); a Zipf workload's
//     distinct keys are all Config.Keys it can draw, an aging or
//     synthetic workload's the keys its requests name, warm-up included.
//   - twochoice is the store's cache mode under its default rule
//     ("twochoice-goleft" among the peers), the cache being tuned; the
//     peers are the other bounded caches compared (otter, ristretto, lru,
//     arc, 2q by default), and a row's best peer is the one with the
//     highest hit ratio.
//   - belady is Belady's optimum with forced insertion (package hitratio):
//     a miss inserts its key and the entry used farthest in the future
//     goes. It is the ceiling of a cache that never drops a Set, which
//     twochoice is.
//   - A row's margin is twochoice's hit ratio less the best peer's, in
//     percentage points (positive: twochoice is ahead).
//
// # Summary
//
// Over the rows that have a margin (twochoice and at least one peer took
// the capacity):
//
//   - within: the rows whose margin is at least −0.5 points, that is
//     twochoice at most half a point behind the best peer, or ahead;
//
//   - the mean margin, in points, and the worst row (the lowest margin);
//
//   - the gap closed: the share of the best peers' distance to Belady
//     that twochoice covers, summed over the rows,
//
//     Σ (twochoice − best) / Σ (belady − best),
//
//     so 0 is twochoice at the best peer everywhere on average, 1 at
//     Belady, and a negative share twochoice behind. The sums weigh each
//     row by its gap in points; a mean of per-row ratios would divide by
//     the rows where the best peer is already near Belady (the LRU
//     stack-friendly traces at large capacities), whose ratios are noise.
//
// # Checks
//
// A replay that breaks a bound is a bug in the replay, not a result, so
// every row is checked and a broken bound is a problem: a cache that keeps
// every key set with more hits than belady, any cache with more hits than
// Belady's optimum with bypass (which bounds caches that may refuse a key,
// ristretto), or any cache that held more entries than its capacity
// (sampled after each batch of requests). Hits are compared over the whole
// stream, warm-up included: Belady's optimum has the most hits of any
// cache over the stream, but not over every part of it, and a generated
// stream whose popularity moves (synthetic:drift) has rows where Belady's
// optimum with forced insertion hits more than the one with bypass in
// the counted half alone. Run returns the problems with the results, and
// an error wrapping ErrCheck.
//
// # Noise
//
// Every figure replays exactly but otter's and ristretto's, which draw hash
// seeds and admission choices at random in each process
// (caches.Peer.Random). On the small LIRS traces they vary a lot: over
// seven runs of the ten LIRS traces and OLTP at the default capacities,
// otter's hit ratio spread over up to 5.8 points (multi3 at 1%, 17.0% to
// 22.8%) and ristretto's over up to 17.7 (cpp at 5%); on OLTP and P12 over
// up to 0.6 and 5.6 points. A row whose best peer is otter moves its
// margin by as much, and the count of rows within half a point by one or
// two. Config.Rounds replays those two caches several times per row and
// reports the median (and the range in Row.Range).
//
// twochoice's figures replay exactly for its one hash seed, but the seed
// picks the sample of keys its policy's miniatures replay (store's
// package documentation, "Eviction"), and with it the setting the cache
// moves to, so on some rows another seed gives another figure. Over
// seeds 1 to 5 the median row of the trace corpus spans 0.34 point, OLTP
// at 25% 72.6% to 73.7% and P12 at 5% 43.0% to 46.1%. Config.Seeds
// replays it under seeds 1 to Seeds and reports the median, so that a
// change to the policy can be told from the luck of one sample.
//
// Config.Ranking pins twochoice's policy to one of its rankings
// (store.CacheOptions.Ranking). Run once per ranking, the corpus shows
// which rows the adaptive policy loses to a ranking it has (the chooser
// moves late or wrong) and which it would lose whatever it chose (no
// ranking reaches the best peer); each row's Policy still rates every
// ranking on the way. Config.Rankings does that in one run: beside the
// adaptive replays, twochoice is replayed pinned to every ranking under
// the same seeds, each row carries the pinned figures (Row.Pinned), and
// Summary.Pinned compares the adaptive policy with two that cannot run
// online: the ranking that does best on each row, chosen in hindsight,
// and the one ranking that does best over all the rows. The first bounds
// what a better chooser could gain, the second what adapting gains over
// a fixed ranking chosen on this very corpus.
//
// Config.Timeline shows how the policy moves rather than where it ends:
// each replay also counts its hits in that many windows of the row's
// counted reads (Row.Timeline, Row.PinnedTimeline, with the rankings'
// replays), and WriteTimeline prints them beside the window of each
// change of twochoice's ranking or prior. A row the adaptive policy loses
// to a pinned ranking then shows whether it loses before its move, after
// it, or in a phase of the workload that favours another ranking; on the
// short LIRS traces at a quarter of their keys, whose phases are a few
// capacities long, the policy trails the best ranking in some windows and
// leads every pinned one in others.
//
// # Method
//
// Each workload is read or generated once and held in memory as a slice of
// uint64 keys (P12's 13.2 million requests take 106 MB), with the next use
// of every request for Belady's optimum (4 bytes a request), and every
// replay of it reads that slice, read-only. A trace is replayed whole,
// every request counted, as in the ARC paper's tables; a Zipf workload is
// Config.Requests counted requests after as many uncounted ones that warm
// the caches up, as bench's Zipf replays are. Caches are built as the
// hit-ratio harness builds them (caches.Options.Sync: otter maintains its
// policy on the caller, ristretto applies each Set before the next
// request). The replays, one per workload, capacity and cache, run in
// parallel, up to GOMAXPROCS at a time, the longest first.
//
// "twochoice bench --corpus" on the shared traces (the two ARC traces and
// the ten LIRS traces at the four default capacities: 384 replays) took
// 2m13s on an idle 2-core AMD EPYC, 221 s of CPU, and 8 minutes while
// other work loaded the machine. Over a third of the CPU is ristretto's,
// which waits for its goroutine after every Set: without it (--caches
// twochoice,otter,lru,arc,2q) the run took 139 s of CPU. ristretto is the
// best peer only on loop at 1% and 5%, where the others get nothing, and
// at times on cs at 5%, tied.
package corpus
