package store

import "time"

// StatsRecorder hears of a cache's hits, misses, evictions and loads as
// they happen (CacheOptions.StatsRecorder), to feed a metrics library:
// its methods take what a Prometheus counter's Add and a histogram's
// Observe take (example_recorder_test.go). It is the interface of otter
// v2's stats.Recorder, with the cause of each eviction.
//
// A cache calls it on the goroutine whose operation counted the event,
// once per event, as Stats counts it: RecordHits and RecordMisses for
// every Get, GetOrSet and GetOrLoad (a GetOrLoad counts as the Get it
// makes first), RecordEviction for every entry that Stats counts as an
// eviction or an expiration, RecordLoadSuccess or RecordLoadFailure for
// every call of a GetOrLoad or GetOrLoadAll loader (a panic in the loader
// is a failure). Peek, Compute and its forms record no hit or miss, as
// they count no Get.
//
// A Get calls it before it returns, so its methods must be fast: an
// atomic add, not a lock that every core takes, and never I/O. They must
// be safe for concurrent use, as goroutines call them at once. They may
// be called while the cache holds a lock of its own (an eviction while
// the table is copied), so they must not call the cache.
//
// A cache without a recorder pays for it one branch on a field that Get
// and Set read anyway.
type StatsRecorder interface {
	// RecordHits records n Gets that found their key.
	RecordHits(n int)
	// RecordMisses records n Gets that did not.
	RecordMisses(n int)
	// RecordEviction records an entry that left the cache for cause
	// DeletionEvicted (made room for another) or DeletionExpired (its
	// time to live had passed when its removal was noticed); weight is
	// the entry's weight (CacheOptions.Weigher), 1 in a cache without a
	// weight bound.
	RecordEviction(cause DeletionCause, weight uint32)
	// RecordLoadSuccess records a loader's call that returned without an
	// error, and the time it took.
	RecordLoadSuccess(loadTime time.Duration)
	// RecordLoadFailure records a loader's call that returned an error
	// or panicked, and the time it took.
	RecordLoadFailure(loadTime time.Duration)
}

// recordHits records n > 0 hits, if the cache has a recorder.
func (s *Cache[K, V]) recordHits(n int) {
	if s.rec != nil {
		s.rec.RecordHits(n)
	}
}

// recordMisses records n > 0 misses, if the cache has a recorder.
func (s *Cache[K, V]) recordMisses(n int) {
	if s.rec != nil {
		s.rec.RecordMisses(n)
	}
}

// recordEviction records an entry evicted or expired for cause, if the
// cache has a recorder.
func (s *Cache[K, V]) recordEviction(cause DeletionCause, weight uint32) {
	if s.rec != nil {
		s.rec.RecordEviction(cause, weight)
	}
}

// recordVictim records the entry whose slot a new key took: expired, or
// evicted.
func (s *Cache[K, V]) recordVictim(expired bool, weight uint32) {
	if expired {
		s.recordEviction(DeletionExpired, weight)
	} else {
		s.recordEviction(DeletionEvicted, weight)
	}
}

// recordLoad counts a loader's call that started at start, in Stats and
// in the recorder if the cache has one.
func (s *Cache[K, V]) recordLoad(l *loads[K, V], start time.Time, failed bool) {
	d := time.Since(start)
	l.nanos.Add(int64(d))
	if failed {
		l.failures.Add(1)
		if s.rec != nil {
			s.rec.RecordLoadFailure(d)
		}
		return
	}
	l.successes.Add(1)
	if s.rec != nil {
		s.rec.RecordLoadSuccess(d)
	}
}
