package store

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/twochoice/twochoice/bucket"
)

// saveOpen saves s to a fresh file and opens it again.
func saveOpen[K comparable, V any](t *testing.T, s kv[K, V], opts *Options) (kv[K, V], string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.snap")
	if err := s.Save(path); err != nil {
		t.Fatalf("Save: %v", err)
	}
	r, err := Open[K, V](path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := r.checkInvariants(); err != nil {
			t.Errorf("restored store: %v", err)
		}
	})
	return r, path
}

// sameReport compares two load reports, leaving out the delete count
// (a restored store has seen none).
func sameReport(t *testing.T, a, b *Report) {
	t.Helper()
	a2, b2 := *a, *b
	a2.Deletes, b2.Deletes = 0, 0
	if !reflect.DeepEqual(&a2, &b2) {
		t.Fatalf("load reports differ:\nsaved:\n%v\nrestored:\n%v", a, b)
	}
}

// sameContents checks that two stores hold the same entries.
func sameContents[K comparable, V any](t *testing.T, a, b kv[K, V]) {
	t.Helper()
	if a.Len() != b.Len() {
		t.Fatalf("Len %d, restored %d", a.Len(), b.Len())
	}
	for k, v := range a.All() {
		got, ok := b.Get(k)
		if !ok || !reflect.DeepEqual(got, v) {
			t.Fatalf("key %v: restored %v, %v; saved %v", k, got, ok, v)
		}
	}
}

// Every rule and hash family, with stashed keys among them: the restored
// store holds the same entries, in the same buckets (its load report
// equals the saved one, histogram, parts and stash included).
func TestSaveOpenSameLoad(t *testing.T) {
	t.Parallel() // one goroutine of CPU work: it overlaps the other such tests
	seed := seedFor(t)
	configs := everyConfig()
	// Small buckets under one choice overflow into the stash.
	configs = append(configs, Options{Choices: 1, BucketSize: 1, Seed: 7}, Options{Placement: bucket.Halves, Choices: 2, BucketSize: 2, Seed: 8})
	stashed := 0
	for _, o := range configs {
		t.Run(name(o), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(o.Placement)))
			s := newTestStore[string, []byte](t, o)
			n := 500 + rng.IntN(3000)
			if testing.Short() {
				n = 200 + rng.IntN(800)
			}
			for i := range n {
				s.Set(fmt.Sprintf("key-%d-%d", i, rng.Uint64()), []byte(fmt.Sprint(i)))
				if i%7 == 0 {
					s.Delete(fmt.Sprintf("key-%d", i/2)) // mostly misses
				}
			}
			r, _ := saveOpen(t, s, nil)
			sameReport(t, s.Report(), r.Report())
			var calls, last, total uint64
			if err := s.SaveProgress(filepath.Join(t.TempDir(), "p.snap"), func(d, n uint64) { calls, last, total = calls+1, d, n }); err != nil {
				t.Fatal(err)
			}
			if calls == 0 || last != total || total != uint64(s.Report().Buckets) {
				t.Fatalf("progress: %d calls, last %d of %d", calls, last, total)
			}
			sameContents(t, s, r)
			stashed += s.Report().Stash
			if r.options() != s.options() {
				t.Fatalf("options %+v, restored %+v", s.options(), r.options())
			}
			// The restored store keeps working, and grows.
			for i := range 2 * n {
				r.Set(fmt.Sprint("new", i), nil)
			}
			if r.Len() != s.Len()+2*n {
				t.Fatalf("Len after more Sets: %d", r.Len())
			}
		})
	}
	if stashed == 0 {
		t.Fatal("no configuration had stashed keys: the stash was not tested")
	}
}

// Integer and byte-array keys, an empty store, and a store in the middle
// of a growth all round-trip.
func TestSaveOpenKeyTypes(t *testing.T) {
	si := newTestMap[int32, string](t, MapOptions{Seed: 3})
	sb := newTestStore[[16]byte, uint64](t, Options{Placement: bucket.DoubleHash, Choices: 3, Hash: 1, Seed: 4})
	for i := range 5000 {
		si.Set(int32(i*7919), fmt.Sprint(i))
		var k [16]byte
		binary.LittleEndian.PutUint64(k[:], uint64(i)*0x9e3779b97f4a7c15)
		sb.Set(k, uint64(i))
	}
	ri, _ := saveOpen(t, si, nil)
	sameReport(t, si.Report(), ri.Report())
	sameContents(t, si, ri)
	rb, _ := saveOpen(t, sb, nil)
	sameReport(t, sb.Report(), rb.Report())
	sameContents(t, sb, rb)

	empty := newTestMap[string, int](t, MapOptions{Seed: 5})
	re, _ := saveOpen(t, empty, nil)
	if re.Len() != 0 || re.Report().Buckets != empty.Report().Buckets {
		t.Fatalf("empty store: restored %d entries, %d buckets", re.Len(), re.Report().Buckets)
	}

	// Stop in the middle of a growth: Save finishes it first.
	g := newTestMap[int, int](t, MapOptions{Seed: 6})
	for i := 0; !g.Stats().Growing || i < 1000; i++ {
		g.Set(i, i)
	}
	rg, _ := saveOpen(t, g, nil)
	sameContents(t, g, rg)
	sameReport(t, g.Report(), rg.Report())
}

// A cache round-trips with its expiries: every key back in its bucket,
// the same load report, entries that had not expired keep their absolute
// expiry (by the store's clock, given to Open), and those that had are
// left out. A full cache that has evicted keeps evicting after Open.
func TestSaveOpenCache(t *testing.T) {
	for _, o := range []Options{{MaxEntries: 5000, Seed: 31}, {MaxEntries: 777, Placement: bucket.DChoice, Choices: 3, BucketSize: 4, Seed: 32, Hash: 1}, {MaxEntries: 3000, Choices: 1, Seed: 33}} {
		t.Run(name(o), func(t *testing.T) {
			clk := newFakeClock()
			o.Clock = clk
			s := newTestStore[string, int](t, o)
			n := 2 * o.MaxEntries // full, and evicting
			for i := range n {
				k := fmt.Sprint("k", i)
				switch i % 3 {
				case 0:
					s.Set(k, i)
				case 1:
					setWithTTL(s, k, i, time.Minute)
				case 2:
					setWithTTL(s, k, i, time.Hour)
				}
			}
			if s.Stats().Evictions == 0 {
				t.Fatal("no evictions: the test wants a full cache")
			}
			r, _ := saveOpen(t, s, &Options{Clock: clk})
			sameReport(t, s.Report(), r.Report())
			sameContents(t, s, r)
			if err := r.checkInvariants(); err != nil {
				t.Fatal(err)
			}
			// The same expiries: after 2 minutes the one-minute keys are
			// gone from both, the others stay.
			clk.advance(2 * time.Minute)
			for i := range n {
				k := fmt.Sprint("k", i)
				v1, ok1 := s.Get(k)
				v2, ok2 := r.Get(k)
				if ok1 != ok2 || v1 != v2 {
					t.Fatalf("%s: saved store %d, %v; restored %d, %v", k, v1, ok1, v2, ok2)
				}
				if ok1 && i%3 == 1 {
					t.Fatalf("%s outlived its TTL", k)
				}
			}
			// Saved now, the expired keys still in their slots are left
			// out of the restored store.
			r2, _ := saveOpen(t, r, &Options{Clock: clk})
			for k := range r2.Keys() {
				if _, ok := r.Get(k); !ok {
					t.Fatalf("%s restored, but expired", k)
				}
			}
			for i := range n {
				r2.Set(fmt.Sprint("more", i), i)
			}
			if r2.Len() > o.MaxEntries {
				t.Fatalf("Len %d over MaxEntries %d after Open", r2.Len(), o.MaxEntries)
			}
			if err := r2.checkInvariants(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
