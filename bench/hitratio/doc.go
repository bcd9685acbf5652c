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
// # Running many
//
// [Run] replays one workload against many caches and capacities, one
// replay per goroutine, up to GOMAXPROCS at a time. Each replay opens its
// own copy of the workload, so a trace is decoded once per replay (cheap
// next to the replay) and nothing is shared between goroutines; the
// copies must yield the same requests, which traces and seeded generators
// do.
package hitratio
