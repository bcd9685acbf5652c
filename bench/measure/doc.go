// Package measure is the benchmark harness: it runs every cache of package
// caches on one workload and measures what a user choosing a cache needs,
// in the same run, so that the figures are comparable. [Run] does a whole
// comparison; [Throughput] and [Memory] are its parts, usable alone.
//
// # Terms
//
//   - A request is a read or a write of a key (package workload). A cache
//     serves it as a cache in front of a slower store does: a read calls
//     Get and, when Get misses, Set; a write calls Set. Throughput counts
//     requests per second, so a cache pays for its misses.
//   - The capacity of a bounded cache is the most entries it holds, given
//     as entries or as a share of the workload's distinct keys
//     ([Capacity]). Unbounded caches (map, syncmap, twochoice-map) ignore it.
//   - A timed run serves requests on a number of goroutines for a fixed
//     duration after a warm-up; a round is one timed run of every cache,
//     the caches taking turns, and with several rounds each figure is the
//     median of its rounds.
//
// # Method
//
// Everything a run replays is generated or read before anything is
// measured, so no measure times a generator or a file's decoding. Streams
// of integer keys live outside the Go heap (see arena), so that the
// harness's own tens of megabytes do not pace the garbage collector.
//
//   - Hit ratio: one goroutine replays the workload against each cache at
//     each capacity, built with deferred work done at once (package
//     hitratio). A generated workload's replay is 2·W requests of which the
//     first W warm the cache up and are not counted (W = max(2^19, 4 × the
//     largest capacity)); a trace or key file is replayed whole, every
//     request counted, as in the ARC paper's tables. The replays run in
//     parallel: their figures do not depend on timing. The result also gives
//     the ceiling (an unbounded cache, which misses only first requests),
//     Belady's optimum at each capacity (the "belady" rows: a miss inserts
//     its key and the entry used farthest in the future goes, the most
//     hits a cache that keeps every key set can get on the replay) and,
//     for Zipf, the share of the C most popular keys, the best any cache
//     can expect under independent requests.
//   - Throughput: each goroutine replays its own stream: for a generator,
//     2^20 requests drawn from its own seed (goroutine 0's are the start of
//     the hit-ratio replay), wrapping around; for a file, the whole file,
//     starting a 1/g-th further on for each goroutine g. The cache is made
//     fresh (without Sync: deferred work is left to the cache, as users run
//     it), warmed up with 4 requests per entry shared by the goroutines,
//     the garbage collected, then all goroutines start together and stop
//     after the duration.
//   - Latency: one request in 64 is timed, Get and Set apart, by reading
//     the clock around the single call. The clock is the runtime's
//     monotonic clock (about 30 ns a read, against 100 ns for time.Now),
//     and the median time of two back-to-back reads is subtracted from
//     every sample. Percentiles come from a log-linear histogram (1/64
//     resolution). Sub-100 ns figures are therefore coarse; the tails are
//     what they are for. Timing 1 request in 64 costs about 1 ns per
//     request on average.
//   - GC: the share of the available CPU (GOMAXPROCS × wall time) that the
//     collector took during the timed part, from runtime/metrics, which
//     the runtime updates as each collection cycle ends; allocations per
//     request from the same source.
//   - Memory: the growth of the live heap (after a collection) from before
//     a cache is made to after it holds C entries; a bounded cache gets 2C
//     distinct keys first, so it is full and has evicted. Divided by the
//     entries held.
//   - Load: for twochoice, the store's load report after the memory fill.
//
// # Caveats
//
// Figures from a shared or busy machine vary from run to run by tens of
// percent: compare caches within a run, repeat runs, and quote medians
// (Config.Rounds does the repeating with the caches interleaved). Hit
// ratios do not depend on timing, except otter's and ristretto's by a few
// tenths of a point (they draw hash seeds at random).
package measure
