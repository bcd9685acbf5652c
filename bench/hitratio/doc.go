// Package hitratio measures the hit ratio of caches on a workload: the
// share of read requests that find their key cached.
//
// # Method
//
// A replay feeds a workload's requests, in order and on one goroutine, to
// one cache: a read calls Get, and when Get misses it calls Set for the key
// (a miss inserts the key, as a cache in front of a slower store does); a
// write calls Set. The hit ratio is hits / reads; writes do not count.
// Every cache starts empty and, unless a warm-up is asked for, every request
// counts, as in the ARC paper's tables.
//
// Caches are built with caches.Options.Sync, so that ristretto's and
// otter's deferred work is done before the next request (see package
// caches). Given the same workload, a replay is exactly reproducible for
// every cache except otter and ristretto, which draw hash seeds and other
// choices at random in each process; on the OLTP trace otter's hit ratio
// varies by up to 0.2 points (one standard deviation) between replays.
//
// # Belady's optimum
//
// Belady's rule (L. A. Belady, "A study of replacement algorithms for a
// virtual-storage computer", IBM Systems Journal 5(2), 1966) evicts the
// entry whose next use is farthest in the future. Offline, with the whole
// request sequence known, it is the optimum: no cache of the same
// capacity gets more hits on that sequence. [BeladyPeer] replays it as a
// peer over a [Sequence] of the requests, in O(log C) a request, in two
// variants:
//
//   - [Forced] ("belady"): a missed key is always cached, and the farthest
//     of the other residents goes. This is the ceiling of a cache that
//     never drops a Set (twochoice, LRU, ARC, 2Q, otter, whose window
//     always takes the new key), and the figure the harness reports as
//     "belady": it reproduces the reference optima quoted for the shared
//     traces (LIRS loop 24.93% at 25% of its blocks, gli 42.18%, cs
//     22.59%, ps 41.48% at 5%, P12 30.15% at 1%, OLTP 76.21% at 10%), of
//     which bypass misses three (loop 24.97%, gli 42.21%, ps 41.67%).
//   - [Bypass] ("belady-bypass"): the missed key itself may be the one
//     left out, when its next use is at least as far as every resident's.
//     It bounds every cache, those with an admission policy that refuse
//     keys (ristretto: caches.Peer.Refuses) included.
//
// A write is served as its Set would be (it refreshes or inserts its key)
// and not counted. With writes in the sequence the rule minimises the
// misses of all requests, which need not give the most read hits; the
// harness's traces and generators read only.
//
// # Running many
//
// [Run] replays one workload against many caches and capacities, one
// replay per goroutine, up to GOMAXPROCS at a time. Each replay opens its
// own copy of the workload, so a trace is decoded once per replay (cheap
// next to the replay) and nothing is shared between goroutines; the
// copies must yield the same requests, which traces and seeded generators
// do.
package hitratio
