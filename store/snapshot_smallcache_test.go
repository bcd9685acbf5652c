package store

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/twochoice/twochoice/bucket"
)

// A cache that cacheSize gives fewer, larger buckets than BucketSize (one
// or two slots a bucket, and a rule that rounds the table up) saves a
// snapshot that opens with its entries. Save cut the histogram's rows to
// BucketSize+1 loads, dropping the buckets that held more, and Open then
// refused its own file as corrupt.
func TestSaveOpenCacheWithLargerBuckets(t *testing.T) {
	for _, o := range []Options{
		{MaxEntries: 10, BucketSize: 1, Placement: bucket.DoubleHash},
		{MaxEntries: 5, BucketSize: 1, Placement: bucket.GoLeft, Choices: 4},
		{MaxEntries: 10, BucketSize: 2, Placement: bucket.DoubleHash},
		{MaxEntries: 10, BucketSize: 1},
		{MaxEntries: 1000, BucketSize: 8, Placement: bucket.DoubleHash},
	} {
		t.Run(fmt.Sprintf("%v/d=%d/C=%d/max=%d", o.Placement, o.Choices, o.BucketSize, o.MaxEntries), func(t *testing.T) {
			o.Seed = 3
			s := newTestStore[int, int](t, o)
			for i := range 10 * o.MaxEntries {
				s.Set(i, i)
			}
			path := filepath.Join(t.TempDir(), "s.snap")
			if err := s.Save(path); err != nil {
				t.Fatal(err)
			}
			r, err := Open[int, int](path, &o)
			if err != nil {
				t.Fatalf("reopening its own snapshot: %v", err)
			}
			if r.Len() != s.Len() {
				t.Fatalf("reopened with %d entries, saved %d", r.Len(), s.Len())
			}
			for k, v := range s.All() {
				if w, ok := r.Get(k); !ok || w != v {
					t.Fatalf("key %d: reopened %d, %v; saved %d", k, w, ok, v)
				}
			}
		})
	}
}
