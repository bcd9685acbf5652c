package store

import (
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twochoice/twochoice/internal/snapshot"
)

// benchEntries is the size of the snapshot benchmarks' store: a million
// string→[]byte(100) entries, or a small one under -short (CI runs
// every benchmark once with -short).
func benchEntries() int {
	if testing.Short() {
		return 20_000
	}
	return 1_000_000
}

func benchKey(i int) string { return fmt.Sprintf("user:%08d:session", i) }

// newSnapshotBenchStore builds a store of benchEntries keys with values
// of 100 bytes each, and returns its keys and the heap it takes.
func newSnapshotBenchStore(b *testing.B) (kv[string, []byte], []string, uint64) {
	n := benchEntries()
	before := heapBytes()
	s, err := New[string, []byte](Options{Seed: 5})
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]string, n)
	for i := range n {
		v := make([]byte, 100)
		v[0] = byte(i)
		keys[i] = benchKey(i)
		s.Set(keys[i], v)
	}
	return s, keys, heapBytes() - before
}

// heapBytes returns the live heap after a collection.
func heapBytes() uint64 {
	runtime.GC()
	return heapNow()
}

var heapSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/allocs:bytes"}}

// heapNow returns the live heap as of the last collection: what the
// program kept, garbage left out (the heap in use between collections also
// holds garbage, up to GOGC percent of the live heap, whatever allocates).
func heapNow() uint64 {
	metrics.Read(heapSample)
	return heapSample[0].Value.Uint64()
}

// allocated returns the bytes allocated on the heap so far.
func allocated() uint64 {
	metrics.Read(heapSample)
	return heapSample[1].Value.Uint64()
}

// Save of the store alone ("none"), and while two goroutines keep
// writing: "update" sets
// random existing keys to values made beforehand (the writers allocate
// nothing, and every value they replace before the walk reaches it must be
// kept for the snapshot: the worst case for copy-on-write); "churn" adds a
// new key and deletes a random old one each time, so the store keeps its
// size. It reports the time, the bytes allocated during Save in all
// (garbage included; the churning writers' keys too), and the store's own
// heap. The "heap" variants also collect garbage every 50 ms during Save
// and report the peak live heap above what it was before Save; the
// collections slow Save down, so their time is not Save's. Each variant
// builds its store afresh.
func BenchmarkSaveWhileWriting(b *testing.B) {
	for _, mode := range []string{"none", "update", "churn"} {
		b.Run(mode+"/time", func(b *testing.B) { benchSaveWhileWriting(b, mode, false) })
		b.Run(mode+"/heap", func(b *testing.B) { benchSaveWhileWriting(b, mode, true) })
	}
}

func benchSaveWhileWriting(b *testing.B, mode string, sampleHeap bool) {
	s, keys, size := newSnapshotBenchStore(b)
	n := len(keys)
	vals := make([][]byte, 1024)
	for i := range vals {
		vals[i] = make([]byte, 100)
	}
	path := filepath.Join(b.TempDir(), "bench.snap")
	var peak, alloc uint64
	var writes atomic.Int64
	var maxPending atomic.Int64
	viewDone = func(n int) {
		if int64(n) > maxPending.Load() {
			maxPending.Store(int64(n))
		}
	}
	defer func() { viewDone = nil }()
	b.ResetTimer()
	for it := range b.N {
		b.StopTimer()
		base := heapBytes()
		var stop atomic.Bool
		var wg sync.WaitGroup
		for w := range 2 {
			if mode == "none" {
				break
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				x := uint64(w + 1)
				var kb []byte
				for seq := 0; !stop.Load(); seq++ {
					x ^= x << 13
					x ^= x >> 7
					x ^= x << 17
					if mode == "update" {
						s.Set(keys[x%uint64(n)], vals[x%1024])
					} else {
						kb = fmt.Appendf(kb[:0], "new:%d:%d:%d", it, w, seq)
						s.Set(string(kb), vals[x%1024])
						s.Delete(keys[x%uint64(n)])
					}
					writes.Add(1)
				}
			}()
		}
		done := make(chan struct{})
		var maxHeap atomic.Uint64
		go func() {
			if !sampleHeap {
				return
			}
			t := time.NewTicker(50 * time.Millisecond)
			defer t.Stop()
			for {
				if h := heapBytes(); h > maxHeap.Load() {
					maxHeap.Store(h)
				}
				select {
				case <-done:
					return
				case <-t.C:
				}
			}
		}()
		a0 := allocated()
		b.StartTimer()
		if err := s.Save(path); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		alloc += allocated() - a0
		close(done)
		stop.Store(true)
		wg.Wait()
		if m := maxHeap.Load(); m > base && m-base > peak {
			peak = m - base
		}
		b.StartTimer()
	}
	if sampleHeap {
		b.ReportMetric(float64(peak)/(1<<20), "peak-extra-MiB")
	}
	b.ReportMetric(float64(size)/(1<<20), "store-MiB")
	b.ReportMetric(float64(alloc)/float64(b.N)/(1<<20), "alloc-MiB/op")
	b.ReportMetric(float64(writes.Load())/float64(b.N), "writes/op")
	b.ReportMetric(float64(maxPending.Load()), "max-pending-entries")
}

// The pair for Open's target: Open (read the file, decode, place every
// key) against decoding the same records held in memory, into a slice of
// entries that keeps them ("memory"), as anything that restores them must,
// and, for reference, into values dropped at once ("memory-discard", which
// spares the garbage collector the growing heap that Open builds). The
// issue asks for Open within 2× of the decode.
//
// "ratio" is the target itself, measured in pairs on a noisy machine: each
// iteration runs Open and the "memory" decode one after the other, with a
// collection before each so that neither inherits the other's garbage, and
// it reports the median over iterations of Open's time over the decode's.
func BenchmarkOpen(b *testing.B) {
	path, recs := openBenchFile(b)
	for _, mode := range []string{"file", "memory", "memory-discard", "ratio"} {
		b.Run(mode, func(b *testing.B) {
			var ratios []float64
			for range b.N {
				switch mode {
				case "file":
					benchOpenFile(b, path)
				case "memory", "memory-discard":
					benchDecodeMemory(b, recs, mode == "memory")
				case "ratio":
					b.StopTimer()
					runtime.GC()
					b.StartTimer()
					t0 := time.Now()
					benchOpenFile(b, path)
					file := time.Since(t0)
					b.StopTimer()
					runtime.GC()
					b.StartTimer()
					t0 = time.Now()
					benchDecodeMemory(b, recs, true)
					ratios = append(ratios, float64(file)/float64(time.Since(t0)))
				}
			}
			if ratios != nil {
				slices.Sort(ratios)
				b.ReportMetric(ratios[len(ratios)/2], "open/decode")
			}
		})
	}
}

// benchOpenFile opens the benchmark snapshot.
func benchOpenFile(b *testing.B, path string) {
	s, err := Open[string, []byte](path, nil)
	if err != nil || s.Len() != benchEntries() {
		b.Fatal(err)
	}
}

// benchDecodeMemory decodes recs, keeping the entries in a slice or not.
func benchDecodeMemory(b *testing.B, recs [][]byte, keep bool) {
	dec := snapshot.NewDecoder[string, []byte]()
	var kept []viewEntry[string, []byte]
	if keep {
		kept = make([]viewEntry[string, []byte], len(recs))
	}
	for x, r := range recs {
		k, v, exp, bi, err := dec.DecodeRecord(r)
		if err != nil {
			b.Fatal(err)
		}
		if kept != nil {
			kept[x] = viewEntry[string, []byte]{k, v, exp, bi}
		}
	}
	runtime.KeepAlive(kept)
}

// openBenchFile saves the benchmark store, and reads its records into
// memory.
func openBenchFile(b *testing.B) (string, [][]byte) {
	s, _, _ := newSnapshotBenchStore(b)
	path := filepath.Join(b.TempDir(), "open.snap")
	if err := s.Save(path); err != nil {
		b.Fatal(err)
	}
	r, err := snapshot.Open(path, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var recs [][]byte
	if err := r.ForEach(func(rec []byte) error {
		recs = append(recs, append([]byte(nil), rec...))
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	return path, recs
}
