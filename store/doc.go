// Package store is a concurrent key-value store for Go on a bucketed
// balanced-allocation hash table: a [Map] that grows as keys arrive, and a
// [Cache] that holds at most a given number of entries and evicts, with
// TTLs. Both report how their keys spread over the buckets next to what
// the theory predicts ([Map.Report]), and save to and restore from a file
// ([Map.Save], [OpenMap], [OpenCache]).
//
//	m, err := store.NewMap[string, int](store.MapOptions{})
//	m.Set("a", 1)
//	v, ok := m.Get("a")
//
//	c, err := store.NewCache(store.CacheOptions[string, []byte]{MaxEntries: 10_000})
//	c.SetWithTTL("session:42", data, time.Minute)
//	fmt.Println(c.Stats().HitRatio(), c.Report())
//
// Every key has d candidate buckets (2 by default) of a few slots (8) and
// goes into the least loaded one. The fullest bucket then holds about
// ln ln n / ln d keys beyond the mean, where one choice would give
// ln n / ln ln n, so buckets stay small, a lookup reads at most d of them,
// and a table fills to 80% before it needs to grow (docs/theory.md has the
// theory and its sources). A Map is a drop-in for a Go map behind a lock,
// with reads that take no lock; a Cache is a drop-in for an LRU cache whose
// eviction policy adapts to the workload.
//
// # Map and Cache
//
// A [Map] keeps every key it is given and grows as keys arrive, as a Go
// map does: it goes where a map behind a sync.RWMutex, or a sync.Map,
// would. The zero [MapOptions] means the defaults (go-left with d = 2,
// buckets of 8 slots, seeded xxHash64 under a random seed);
// MapOptions.SizeHint sizes the table up front, as make's size hint does.
//
// A [Cache] holds at most CacheOptions.MaxEntries entries, in a table that
// grows as entries arrive up to one of MaxEntries slots. A Set of a new key
// whose candidate buckets are full in that final table evicts one of their
// entries, and is never refused. Entries may expire: SetWithTTL, or for
// Set CacheOptions.DefaultTTL (after write), ExpireAfterAccess (sliding)
// or an ExpiryCalculator (per entry); with RefreshAfter, GetOrLoad reloads
// old entries in the background. A cache may be bounded in weight as well
// (CacheOptions.MaxWeight and Weigher: bytes, say): a writer then makes
// room for its value's weight before it stores it, evicting the entries
// the policy ranks lowest among a sample, so the total never passes the
// bound. Stats gives the hit ratio.
//
// Both have Get, Set, GetOrSet (sync.Map's LoadOrStore), Delete, Len,
// Clear, All, Keys and Values for range loops, Stats, Report (the load report)
// and Save; [OpenMap] and [OpenCache] restore what Save wrote. A Cache
// adds [Cache.GetOrLoad] and [Cache.GetOrLoadAll], which load a missing
// key once for all the callers that miss it at the same time, and
// [Cache.Compute] with its forms (SetIfAbsent, ComputeIfAbsent,
// ComputeIfPresent), which change a key's entry atomically,
// [Cache.RemoveExpired], which removes the expired entries,
// [Cache.Peek], a read that does not count as a use, and
// [Cache.SetMaximum], which changes the bound of a live cache.
// CacheOptions.StatsRecorder feeds a metrics library with every hit,
// miss, eviction and load ([StatsRecorder]). Options
// they cannot use are an error wrapping [ErrOptions], never a panic. Keys
// of a string kind, of an integer kind or arrays of bytes are hashed
// without allocating, and a Get or Set of them allocates nothing (a
// table's growth aside); other comparable key types go through hash/maphash and
// cannot be saved (see [NewMap]).
//
// # Concurrency
//
// All methods are safe for concurrent use by any number of goroutines.
// Readers take no lock: they read slots optimistically, checking the
// bucket's version before and after (seqlock_unsafe.go says why that is
// memory-safe for the slot types it allows), or under the bucket's read
// lock for other slot types, and count hits and misses in striped
// counters. A cache's writers lock only their key's candidate buckets
// (see Eviction), and wait only while a growing table's entries are
// copied to the next (cache_grow.go). A map's writers lock only their
// key's buckets too while no growth, re-key or Save is under way: an update locks the bucket that holds its key, an insert its key's
// candidates, and writes on different keys run in parallel. What changes
// more than a key's buckets (a growth step, a re-key, the stash, Clear, a
// snapshot's view) closes a gate, and writers then take the map's mutex
// one at a time (gate.go).
//
// # Iteration and views
//
// All visits the table bucket by bucket, copying each bucket's entries
// under its read lock: a consistent view of one bucket at a time, with no
// bucket held while the loop body runs. It first finishes a growth under
// way (in small batches) and keeps the table from growing until the loop
// ends. It is not a snapshot, but like a Go map's range it never yields
// a key removed (deleted, cleared, evicted or expired) before the loop
// reached its bucket: [Map.All] states what it guarantees. The load
// report takes the same per-bucket view, reading each bucket's control
// word; snapshots and the debug page (package storehttp) build on the same
// visit, which needs no table-wide pause.
//
// # Snapshots
//
// [Map.Save] and [Cache.Save] write the store to a file, and [OpenMap]
// and [OpenCache] restore it, into a table of the same size with every key
// in the bucket it was in, so the restored store's load report equals the
// saved one (docs/snapshot-format.md has the format). The file records the
// names and the shapes of the key and value types, and a store is restored
// only into types of the same names and shapes (ErrTypeMismatch; see
// OpenMap). A snapshot is the store at one instant, taken without stopping
// it, by copy-on-write per bucket: at the
// snapshot instant every bucket is marked uncopied; the walker then claims
// one bucket at a time (a compare-and-swap on the bucket's state) and
// copies it unless a writer did, and a writer about to change one of its
// key's candidate buckets first claims and copies those not yet copied.
// Readers never wait, and records stream to the file as the walk goes. A
// writer waits at most for one bucket's copy, except that when writers
// copy faster than the file takes the records, they write what they copy
// themselves, waiting for the file side (backpressure; cow.go). A growth
// under way is finished first (in small batches) and none starts until the
// snapshot ends: new keys whose candidates are full go to the stash
// meanwhile. cow.go has the details, and the rule for code that changes a
// table during a snapshot.
//
// # Caveats
//
//   - Stats costs O(stripes): counters live in padded stripes.
//   - A cache under one choice evicts from full buckets before it is
//     full: its keys have a single candidate bucket (the theory's point).
//   - BucketSize below 8 saves no memory.
//   - A large cache fills smaller tables before its final one, and a key
//     whose candidates are full in one of them makes it grow rather than
//     evict. With buckets of one slot that happens on chance collisions
//     long before the table is full: a cache of 2^24 entries holding
//     1,000 keys had 280 MiB to 7.5 GiB of heap under one choice (three
//     hash seeds; its final table at worst) and 15 to 30 MiB under two,
//     against 0.3 MiB with the default buckets of 8. Buckets of one slot
//     are there to study the rules, not to hold a cache's data.
//   - Key types other than strings, integers and byte arrays are hashed
//     through hash/maphash, reproducible only within one process: Save
//     refuses them (ErrKeyType). Values of complex, function or channel
//     types cannot be saved either (ErrValueType).
//   - While a snapshot runs a map's table does not grow, so a long Save
//     under heavy inserts leaves a large stash until the next Set of a new
//     key after it (updates and deletes do not grow the table). That Set
//     grows the table straight to the size its entries need, into a table
//     prepared a chunk per write during the snapshot; it copies the list
//     of stashed keys to move (about 7 ms for 200,000 keys), and the stash
//     then moves a few keys per write, like the buckets.
//
// # How it works
//
// The sections below describe the table behind both types, for readers of
// the code; docs/theory.md gives the results it rests on.
//
// # Terms
//
// The terms of package bucket apply: a slot holds one entry; a bucket is
// BucketSize slots (8 by default); the table is n buckets; a key's
// candidates are the d buckets its hash names under the placement rule;
// a part is one of the d ranges of buckets under Halves and GoLeft; a
// bucket's load is the number of entries in it; a map's stash holds the
// keys whose candidates were all full. And:
//
//   - The hash of a key is one 64-bit word from the table's hash family
//     and seed ([hashfn]). Its candidate stream gives the candidates (see
//     [hashfn.Generator]); its 7 lowest bits are the key's tag; bit 7 is the
//     coin that breaks ties between two candidates.
//   - The control word of a bucket holds one byte per slot: 0 for empty,
//     0x80 | tag for full.
//   - The sync word of a bucket is its version (a seqlock: writers move it
//     on, optimistic readers check it), its reader-writer lock and its
//     stash hint, packed in 64 bits (lock.go).
//   - Utilization is entries / (n × BucketSize). The load report's
//     Utilization counts the entries in buckets, the stash aside (it is
//     MeanLoad / BucketSize), and a cache's counts Len / MaxEntries.
//
// # Layout
//
// A bucket is a header of two words, its control word and its sync word,
// and 8 slots of key and value side by side with no padding (a
// string→int64 slot is 24 bytes, as in Go's own map): 16 bytes of header
// per 8 slots. A map keeps its headers in an array of their own, four to a
// cache line, beside the array of its slots, so that a lookup loads its
// candidates' headers and then only the slot a tag names. Past 1 MiB of
// slots, more than a core's L2 holds, a lookup or a write prefetches both
// candidates' slots as it loads the headers, so that the slot it reads
// or writes comes with the header rather than a miss after it
// (bigTableBytes). Both arrays are allocated in chunks of 1024 buckets
// (chunk.go), so that a map's next table can be allocated a chunk at a
// time before a growth needs it. A
// cache keeps each bucket's header beside its slots, behind the slots'
// 32-bit policy words (evict.go), 48 bytes of header, so that a Set finds
// a candidate's policy words on the lines of its control word
// (cacheBucket).
//
// Both types share the table's core: the bucket with its control and sync
// words and its optimistic read (bucket.go, ctrl.go, lock.go,
// seqlock_unsafe.go), the candidates of a hash and the choice among them
// (geometry.go), the hash functions of keys (keyhash.go), the counters
// (counters.go), and the bucket-at-a-time visits of snapshots, iteration
// and the load report (visit.go, cow.go, iter.go, report.go). What differs
// is in their own files: a map's table grows and has a stash (map.go,
// table.go, grow.go, chunk.go, stash.go, flood.go); a cache's grows without
// evicting up to its bound, then evicts, and locks buckets for its writers
// (cache.go, cache_set.go, cache_grow.go, cachetable.go, evict.go,
// ghost.go, shadow.go, clock.go), and loads, computes and reports
// deletions on top of that (cache_load.go, cache_compute.go, deletion.go).
//
// # Invariant
//
// A key lives in one of its d candidate buckets or in the stash, once.
// A lookup therefore reads at most d buckets, and the stash only when the
// stash hint of its first candidate is set. The invariant checker in the
// tests asserts it, with the rest of the table's bookkeeping, after every
// test.
//
// # Lookup
//
// Get hashes the key once and visits its candidates in order. For each it
// loads the control word atomically and compares the tag with all slots at
// once (a SWAR zero-byte test, as in Go's Swiss map); only if a tag matches
// does it read the slot, compare the full key (a hash collision never
// returns a wrong value) and copy the value out: optimistically, between
// two loads of the bucket's sync word, for slot types that can be copied a
// word at a time (seqlock_unsafe.go), and under the bucket's read lock for
// the others and in purego builds. Get writes nothing to the table: it
// counts its hit or miss in a counter stripe (counters.go).
//
// # Insertion
//
// Set looks the key up among its candidates and updates it in place if it
// is there. A new key goes to the candidate the rule picks
// ([bucket.Placement.Choose]): the least loaded, ties broken by the rule
// (leftmost under GoLeft, a coin from the key's hash otherwise, so the
// placement is reproducible from the seed). If all candidates are full, a
// map puts it in the stash, and the stash hint of its first candidate goes
// up; a cache evicts (see Eviction). A map's keys never move within a
// table: there is no probing and no cuckoo displacement, and a deleted
// slot is simply empty again. A cache's eviction may move one key to its
// other candidate (see Relocation).
//
// # Growth
//
// When a map's entries pass the rule's utilization threshold (0.80 for
// go-left with d = 2 and buckets of 8, 0.75 for d-choice: the largest u at
// which the fluid limit sends at most 1e-4 of the keys to the stash;
// grow.go has the table for every rule, d and C), the table doubles, as a
// Go map's does: a freshly grown table is then at least half full (a table
// that All or Save kept from growing grows in one step to the size its
// entries need: see Caveats). MapOptions.Growth sets another factor, from
// 1.25 to 4: by 1.5 a grown table is two thirds full, and each key moves
// more often over a growing map's life. Keys move to the new table
// incrementally, a few old buckets per write, so no caller waits for a
// whole rehash; during the move a lookup checks the old table and then the
// new one, and keys only move forward. Each old bucket is
// moved in 8 passes, by tag bits, so that keys arrive in the new table in
// an order the theory describes (moving whole buckets at once leaves grown
// tables measurably less balanced than the fluid limit; see grow.go).
//
// # Hash flooding
//
// Keys that collide (an attacker's, built against xxHash64's structure
// without the seed or against a seed they learned, or structured keys a
// family spreads poorly) cannot make the table grow: only the entries do.
// A key whose candidates are full goes to the stash, a Go map, so it costs
// O(1) per operation whatever the keys. A stash far past what the fluid
// limit allows at the table's utilization is the signature of a flood, and
// the map answers it by moving its keys, incrementally as a growth does,
// to a table of the same size under a new hash function: the same family
// under a new random seed first, then, if the keys still collide, SipHash
// (hashfn.Sip), which no one can build collisions for without the seed.
// Stats.Rekeys and the load report count these moves, and Options, Seed
// and the load report give the function in use (flood.go). The seed is
// what an attacker needs: print it only where the map's owner reads it
// (snapshots keep it; the debug page and JSON reports hide it unless told
// to show it). A cache needs none of this: its table grows only with its
// entries, up to its bound, and colliding keys only evict one another.
//
// # Eviction
//
// A [Cache] holds at most CacheOptions.MaxEntries entries (cache.go,
// evict.go, ghost.go, shadow.go, clock.go). Its final table has exactly
// MaxEntries slots (buckets of BucketSize slots and a few of one fewer,
// when the rule's table size allows; a small bound or a rule that rounds
// the table up gives smaller buckets, and buckets of one or two slots may
// be made larger instead), so Len can never pass the bound. A large cache
// starts smaller and doubles, as a map does, through tables that never
// evict, until the next doubling would come within a quarter of the final
// size (cache_grow.go). A new key goes to its least loaded candidate, as
// in a map; when all its candidates in the final table are full it takes
// the slot of a victim among their entries (d × BucketSize of them, 16 by default):
// the candidates are the eviction sample, and no list of all entries, no
// global lock and no background goroutine is needed. Every Set lands:
// after Set(k, v) returns, Get(k) returns v until k is set again, deleted,
// expires, or is evicted by a later Set of another key.
//
// The victim is the entry whose next use the policy expects last
// (evict.go): Belady's rule, with each entry's future estimated from its
// past. Each slot keeps the tick of its last use (ticks count inserts),
// g, a running mean of the gaps between its uses, and its last gap, which
// the rankings that follow a key's latest gap read; a key the cache
// evicted leaves its tick and g in a ghost table, so that it comes back
// with its history (its last gap is then the time it was away), and a key seen for the first time is scored with a newcomer
// gap of several capacities, the first to go if it is not used again. The
// victim has the highest max(g, age) − (1−λ)·min(g, age): with λ = 1 the
// largest gap goes (least frequently used), with λ = 0 the entry due last
// (which keeps a stable subset of a loop too large for the cache, where
// LRU keeps nothing), with λ = 2.5 the one longest unused for its gap
// (close to LRU). λ, the share α by which a use moves g and the newcomer
// gap make a ranking; others rank by age alone (LRU) or put the keys not
// reused within a capacity on probation, as 2Q does. The cache has nine
// (ranking.go), runs each on a miniature cache that replays a sample of
// its keys, and moves from the ranking in use to another only when that
// one's miniature clearly beats it on the requests where they differ
// (shadow.go): over recent requests, or, to go back to a ranking it has
// used, over many. A key's first use blends g from a prior gap, short (8
// capacities) or long (64); under the long one g says mostly how often a
// key was used, which is what counts for independent draws over far more
// keys than the cache holds, and the cache takes it only while a miniature
// run with it clearly beats the one with the prior in use. Expired entries
// go before any other.
// [Cache.Policy] reports the setting in use, each miniature's hit ratio
// and lead, and the last changes, with the Get count at which each came.
//
// # Relocation
//
// The candidates are a small sample, and on workloads whose keys recur in
// long cycles the best victim among them is often a key worth keeping.
// An eviction can then reach further (relocate.go), with the move of a
// cuckoo hash table, one step deep: each resident of the new key's
// candidates has one other candidate, and if that bucket holds an entry
// the ranking scores above every candidate, the resident moves there,
// evicting that entry, and the new key takes the resident's slot. The
// sample grows from 16 entries to up to 144, while a lookup still reads
// at most two buckets. Each resident looked at is hashed again (a slot
// keeps no hash), which makes an evicting Set several times dearer
// (BenchmarkRelocation), so a cache relocates only while a relocating
// twin of its miniature beats the one that does not (shadow.go): from its
// first sampled Gets on, on trial, until the twin's lead over a couple of
// hundred differing Gets keeps it or ends it (trial.go), and then
// whenever the twin leads by a large lead over recent requests or a
// small one over many (the prior's miniature is weighed the same way,
// duel.go);
// Stats.Relocations counts the moves. A move holds both of the resident's
// candidates, so every writer finds the key where it is; a Get that races
// the move may miss it, as it may miss a key being evicted; All stops
// relocation while it runs. Relocation needs d = 2 and is off under a
// weight bound.
//
// Writers lock only their key's candidate buckets (an update only the
// bucket that holds the key), in increasing order, so writes on different
// keys run in parallel; readers are as in a map, and record a hit in the
// slot's policy word only when it would change it noticeably. On amd64 a
// writer fills the buckets it holds, releases them and writes the ghost
// with plain stores (relaxed_amd64.go says why that is sound), so an
// insert makes three locked instructions (its tick and the two bucket
// locks) and an update two, where atomic stores throughout would make
// about sixteen and four.
//
// TTLs: SetWithTTL, or for Set one of CacheOptions.DefaultTTL (expiry
// after write), ExpireAfterAccess (after the last read or write) and
// ExpiryCalculator (per entry, on create, update and read); time comes
// from CacheOptions.Clock (the system clock by default). An expired entry
// is never returned. Len counts it until it is removed: by a Get, Set or
// Delete of its key, by a Set of another key that needs room among its
// buckets, by a growth of the table, or by [Cache.RemoveExpired], which
// removes them all. A slot's expiry is kept beside it in Unix nanoseconds
// (0: none), and cacheTable.entriesOf returns it with the entries, for
// snapshots. A read moves it, under ExpireAfterAccess or a calculator,
// with a compare-and-swap and only when that moves it by more than a 32nd
// of the TTL (expiry.go).
//
// Refresh: under CacheOptions.RefreshAfter, GetOrLoad reloads an entry
// written more than RefreshAfter ago in the background, through its
// loader, while readers keep getting the old value; a write of the key
// meanwhile wins over the reload (cache_refresh.go). The slots' write
// times are kept beside them only in a cache that refreshes.
package store
