package workload

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// tracesDir is ../shared/traces seen from the repository's root.
var tracesDir = filepath.Join("..", "..", "..", "shared", "traces")

// openTrace opens one of the shared ARC traces or skips the test.
func openTrace(t *testing.T, name string) *File[uint64] {
	t.Helper()
	p := filepath.Join(tracesDir, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("trace %s not found (%v): the real-trace tests need ../shared/traces beside the repository", name, err)
	}
	f, err := OpenARC(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// The expansion of "start count" lines must give the request and unique
// block counts of docs/traces.md.
func TestTraceCounts(t *testing.T) {
	for _, c := range []struct {
		name             string
		requests, unique int
		long             bool
	}{
		{"OLTP.lis.zst", 914_145, 186_880, false},
		{"P12.lis.zst", 13_208_930, 3_153_310, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.long && testing.Short() {
				t.Skip("13 million requests; skipped in -short mode")
			}
			f := openTrace(t, c.name)
			seen := make(map[uint64]struct{}, c.unique)
			requests := 0
			buf := make([]Request[uint64], BatchSize)
			for {
				n, err := f.Read(buf)
				if err != nil {
					if err != io.EOF {
						t.Fatal(err)
					}
					break
				}
				for _, r := range buf[:n] {
					seen[r.Key] = struct{}{}
				}
				requests += n
			}
			if requests != c.requests || len(seen) != c.unique {
				t.Fatalf("%s: %d requests, %d unique blocks; docs/traces.md says %d and %d",
					c.name, requests, len(seen), c.requests, c.unique)
			}
		})
	}
}

func BenchmarkReadOLTP(b *testing.B) {
	p := filepath.Join(tracesDir, "OLTP.lis.zst")
	if _, err := os.Stat(p); err != nil {
		b.Skipf("trace not found: %v", err)
	}
	buf := make([]Request[uint64], BatchSize)
	b.ReportAllocs()
	for b.Loop() {
		f, err := OpenARC(p)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			m, err := f.Read(buf)
			if err != nil {
				break
			}
			n += m
		}
		f.Close()
		b.ReportMetric(float64(n), "requests/op")
	}
}
