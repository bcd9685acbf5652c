package store

import (
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twochoice/twochoice/internal/snapshot"
)

// benchEntries is the size of the snapshot benchmarks' store: the issue's
// million string→[]byte(100) entries, or a small one under -short (CI runs
// every benchmark once with -short).
func benchEntries() int {
	if testing.Short() {
		return 20_000
	}
	return 1_000_000
}

func benchKey(i int) string { return fmt.Sprintf("user:%08d:session", i) }

var benchStore struct {
	sync.Mutex
	n    int
	s    *Store[string, []byte]
	size uint64 // heap bytes the store holds
}

// snapshotBenchStore builds the store once per process.
func snapshotBenchStore(b *testing.B) (*Store[string, []byte], uint64) {
	n := benchEntries()
	benchStore.Lock()
	defer benchStore.Unlock()
	if benchStore.s != nil && benchStore.n == n {
		return benchStore.s, benchStore.size
	}
	benchStore.s = nil
	before := heapBytes()
	s, err := New[string, []byte](Options{Seed: 5})
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		v := make([]byte, 100)
		v[0] = byte(i)
		s.Set(benchKey(i), v)
	}
	benchStore.n, benchStore.s, benchStore.size = n, s, heapBytes()-before
	return s, benchStore.size
}

// heapBytes returns the live heap after a collection.
func heapBytes() uint64 {
	runtime.GC()
	return heapNow()
}

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

// heapNow returns the bytes of heap objects, live or not yet collected.
func heapNow() uint64 {
	metrics.Read(heapSample)
	return heapSample[0].Value.Uint64()
}

// Save of the store while two goroutines keep updating random keys (with
// values made beforehand, so that they allocate nothing themselves). It
// reports the peak heap above what it was before Save (sampled every
// millisecond, garbage included) next to the store's own heap.
func BenchmarkSaveWhileWriting(b *testing.B) {
	s, size := snapshotBenchStore(b)
	n := benchEntries()
	vals := make([][]byte, 1024)
	for i := range vals {
		vals[i] = make([]byte, 100)
	}
	path := filepath.Join(b.TempDir(), "bench.snap")
	var peak uint64
	var writes atomic.Int64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		base := heapBytes()
		var stop atomic.Bool
		var wg sync.WaitGroup
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				x := uint64(w + 1)
				for !stop.Load() {
					x ^= x << 13
					x ^= x >> 7
					x ^= x << 17
					s.Set(benchKey(int(x%uint64(n))), vals[x%1024])
					writes.Add(1)
				}
			}()
		}
		done := make(chan struct{})
		var maxHeap atomic.Uint64
		go func() {
			t := time.NewTicker(time.Millisecond)
			defer t.Stop()
			for {
				if h := heapNow(); h > maxHeap.Load() {
					maxHeap.Store(h)
				}
				select {
				case <-done:
					return
				case <-t.C:
				}
			}
		}()
		b.StartTimer()
		if err := s.Save(path); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		close(done)
		stop.Store(true)
		wg.Wait()
		if m := maxHeap.Load(); m > base && m-base > peak {
			peak = m - base
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-extra-MiB")
	b.ReportMetric(float64(size)/(1<<20), "store-MiB")
	b.ReportMetric(float64(writes.Load())/float64(b.N), "writes/op")
}

// The pair for Open's target: Open (read the file, decode, place every
// key) against decoding the same records held in memory. The issue asks
// for Open within 2× of the decode.
func BenchmarkOpen(b *testing.B) {
	path, recs := openBenchFile(b)
	for _, mode := range []string{"file", "memory"} {
		b.Run(mode, func(b *testing.B) {
			for range b.N {
				if mode == "file" {
					s, err := Open[string, []byte](path, nil)
					if err != nil || s.Len() != benchEntries() {
						b.Fatal(err)
					}
					continue
				}
				dec := snapshot.NewDecoder[string, []byte]()
				for _, r := range recs {
					if _, _, _, _, err := dec.DecodeRecord(r); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// openBenchFile saves the benchmark store, and reads its records into
// memory.
func openBenchFile(b *testing.B) (string, [][]byte) {
	s, _ := snapshotBenchStore(b)
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
