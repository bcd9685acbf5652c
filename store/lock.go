package store

import (
	"runtime"
	"sync/atomic"
)

// Every bucket has a 64-bit sync word that serves as its reader-writer
// lock and also holds its hint and counters, so a Get writes to no cache
// line but the one of the bucket it reads (the word sits beside the control
// word, in the bucket's first cache line):
//
//	bits  0–15  readers holding the bucket
//	bit   16    a writer holds or is taking the bucket
//	bits 17–23  stash hint: keys in the stash whose first candidate is
//	            this bucket (saturates at 127 and then stays there)
//	bits 24–43  hits counted here since the last drain
//	bits 44–63  misses counted here (lookups whose first candidate this is)
//
// Why a lock at all, rather than optimistic (seqlock) reads: keys and
// values are of any type, and a string or a slice is several words; a torn
// read of a string header can be dereferenced before any version check
// could reject it, which is not memory-safe in Go, and plain reads racing
// with writes upset the race detector. So a reader takes the bucket's lock
// in shared mode, but only after the lock-free tag check found a candidate
// slot: misses and buckets without a matching tag cost no write at all. A
// hit costs two atomic adds on a line that the bucket read brings in anyway;
// the hit counter rides on the second one (the unlock adds hitOne-1).
//
// The counters are 20 bits each; when one reaches drainAt, the goroutine
// that saw it moves drainAt counts into the store's striped totals
// ([counters]). Stats adds the totals and what is left in every bucket.
//
// At most 65535 goroutines may hold one bucket's read lock at once; the
// lock is held for a key comparison and a copy, so reaching that would take
// that many goroutines preempted inside the same few instructions.
const (
	readerOne   = 1
	readerMask  = 1<<16 - 1
	writerBit   = 1 << 16
	hintShift   = 17
	hintOne     = 1 << hintShift
	hintMax     = 127
	hitShift    = 24
	hitOne      = 1 << hitShift
	missShift   = 44
	missOne     = 1 << missShift
	counterMask = 1<<20 - 1
	drainAt     = 1 << 19
)

type syncWord struct{ v atomic.Uint64 }

// rlock takes the bucket in shared mode.
func (w *syncWord) rlock() {
	for {
		if w.v.Add(readerOne)&writerBit == 0 {
			return
		}
		// A writer holds it: step back, and wait without writing.
		w.v.Add(^uint64(readerOne - 1))
		for i := 0; w.v.Load()&writerBit != 0; i++ {
			backoff(i)
		}
	}
}

// runlock releases a shared hold, counting a hit when hit is set, and
// reports the word after the release so the caller can drain counters.
func (w *syncWord) runlock(hit bool) uint64 {
	if hit {
		return w.v.Add(hitOne - readerOne)
	}
	return w.v.Add(^uint64(readerOne - 1))
}

// lock takes the bucket exclusively: first the writer bit (so no new reader
// gets in), then waits for the readers inside to leave. Writers of a
// growing store are already serialized by the store's mutex; the CAS makes
// the lock exclusive on its own too, for writers that lock buckets only.
func (w *syncWord) lock() {
	for i := 0; ; i++ {
		v := w.v.Load()
		if v&writerBit == 0 && w.v.CompareAndSwap(v, v|writerBit) {
			break
		}
		backoff(i)
	}
	for i := 0; w.v.Load()&readerMask != 0; i++ {
		backoff(i)
	}
}

// unlock releases an exclusive hold.
func (w *syncWord) unlock() { w.v.And(^uint64(writerBit)) }

// countMiss counts a lookup that found nothing, on its first candidate.
func (w *syncWord) countMiss() uint64 { return w.v.Add(missOne) }

// hint returns the stash hint.
func (w *syncWord) hint() uint64 { return w.v.Load() >> hintShift & hintMax }

// addHint raises (delta 1) or lowers (delta -1) the stash hint. Only
// writers call it, one at a time; once saturated the hint stays.
func (w *syncWord) addHint(delta int) {
	h := w.hint()
	switch {
	case h == hintMax:
	case delta > 0:
		w.v.Add(hintOne)
	case h > 0:
		w.v.Add(^uint64(hintOne - 1))
	}
}

// take removes up to n counts from the counter at shift and returns how
// many it removed; used to drain a counter into the totals.
func (w *syncWord) take(shift uint, n uint64) uint64 {
	for {
		v := w.v.Load()
		c := v >> shift & counterMask
		if c == 0 {
			return 0
		}
		c = min(c, n)
		if w.v.CompareAndSwap(v, v-c<<shift) {
			return c
		}
	}
}

// hits and misses return the counts not yet drained.
func (w *syncWord) hits() uint64   { return w.v.Load() >> hitShift & counterMask }
func (w *syncWord) misses() uint64 { return w.v.Load() >> missShift & counterMask }

// backoff waits a little, longer as i grows: spin first (the holder is
// usually a few instructions from done), then yield the processor.
func backoff(i int) {
	if i < 16 {
		return
	}
	runtime.Gosched()
}
