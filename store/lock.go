package store

import (
	"runtime"
	"sync/atomic"
)

// Every bucket has a 64-bit sync word, beside its control word in the
// bucket's first cache line. It is the bucket's seqlock and, for the slot
// types that cannot be read optimistically, its reader-writer lock, and it
// holds the bucket's stash hint:
//
//	bits  0–15  readers holding the bucket (locked read path only)
//	bit   16    a writer holds or is taking the bucket
//	bits 17–23  stash hint: keys in the stash whose first candidate is
//	            this bucket (saturates at 127 and then stays there)
//	bits 24–63  version: +1 each time a writer releases the bucket
//
// Readers of the optimistic path (seqlock.go) never write it: they load
// it, read what they need, and load it again; if it changed (or a writer
// held the bucket), what they read may be torn and they read again. Readers
// of the locked path take it in shared mode. Writers take it exclusively to
// change or empty a full slot; filling an empty slot needs no lock (see
// bucketOf.put).
//
// At most 65535 goroutines may hold one bucket's read lock at once; the
// lock is held for a key comparison and a copy, so reaching that would take
// that many goroutines preempted inside the same few instructions. The
// version wraps after 2^40 writes to one bucket; a reader would have to
// sleep through exactly that many writes between its two loads to be
// fooled.
const (
	readerOne   = 1
	readerMask  = 1<<16 - 1
	writerBit   = 1 << 16
	hintShift   = 17
	hintOne     = 1 << hintShift
	hintMax     = 127
	versionOne  = 1 << 24
	versionMask = ^uint64(versionOne - 1)
)

type syncWord struct{ v atomic.Uint64 }

// begin starts an optimistic read: it waits until no writer holds the
// bucket and returns the word, to compare with what the read ends on.
func (w *syncWord) begin() uint64 {
	for i := 0; ; i++ {
		if v := w.v.Load(); v&writerBit == 0 {
			return v
		}
		backoff(i)
	}
}

// rlock takes the bucket in shared mode (the locked read path).
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

// runlock releases a shared hold.
func (w *syncWord) runlock() { w.v.Add(^uint64(readerOne - 1)) }

// lock takes the bucket exclusively: first the writer bit (so no new reader
// gets in and optimistic readers know to retry), then waits for the
// readers of the locked path inside to leave.
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

// tryLock is lock for a writer that already holds other buckets and
// must not wait for this one: it takes the bucket only if no writer
// holds it, and then waits for the readers of the locked path, which hold
// no other bucket, to leave.
func (w *syncWord) tryLock() bool {
	v := w.v.Load()
	if v&writerBit != 0 || !w.v.CompareAndSwap(v, v|writerBit) {
		return false
	}
	for i := 0; w.v.Load()&readerMask != 0; i++ {
		backoff(i)
	}
	return true
}

// unlock releases an exclusive hold and moves the version on, in one add.
func (w *syncWord) unlock() { w.v.Add(versionOne - writerBit) }

// unlockAlone is unlock for a holder that knows no one else writes the
// word while it holds the bucket: no reader of the locked path (the slot
// type is read optimistically, so readers only load the word) and no
// stash hint to change (a cache has no stash). Other writers only load the
// word until the writer bit clears. It then needs no read-modify-write,
// and stores the new word with storeRelease, which on amd64 does not wait
// for the holder's earlier stores to reach the cache (relaxed_amd64.go).
func (w *syncWord) unlockAlone() { storeRelease(&w.v, w.v.Load()+versionOne-writerBit) }

// hint returns the stash hint.
func (w *syncWord) hint() uint64 { return hintOf(w.v.Load()) }

func hintOf(v uint64) uint64 { return v >> hintShift & hintMax }

// addHint raises (delta 1) or lowers (delta -1) the stash hint. Only
// writers call it, one at a time; once saturated the hint stays. It does
// not move the version: an optimistic reader that sees the word change
// only reads again.
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

// backoff waits a little, longer as i grows: spin first (the holder is
// usually a few instructions from done), then yield the processor.
func backoff(i int) {
	if i < 16 {
		return
	}
	runtime.Gosched()
}
