package store

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
)

// FuzzStore decodes the fuzz input into options and a list of operations
// and checks every result against a Go map, as the Swiss map's FuzzTable
// does; the invariant checker runs at the end. The first bytes choose the
// rule, d, bucket size, family and seed, so every rule and family is
// fuzzed; small buckets and a small key space make the stash, deletes,
// reinserts and growths frequent. Now and then the store is saved and
// restored, which must give the same entries and load report. The seed
// corpus runs as a normal test. Fuzz it with a bound on minimizing, as
// scripts/fuzz runs every fuzzer (Go's default minimizes each new input
// for a minute, most of a short run of a fuzzer this slow):
//
//	go test -run '^$' -fuzz '^FuzzStore$' -fuzzminimizetime 200x ./store
func FuzzStore(f *testing.F) {
	for _, rule := range bucket.Placements() {
		for _, kind := range hashfn.Kinds() {
			for _, c := range []byte{1, 2, 8} {
				d := byte(2)
				if rule == bucket.OneChoice {
					d = 1
				}
				// Ending in a save and restore (opcode 15, key 0).
				f.Add(append(append([]byte{byte(rule), d, c, byte(kind), 42}, seedOps(200, c)...), 15, 0, 0))
			}
		}
	}
	f.Add([]byte{byte(bucket.DoubleHash), 8, 3, 1, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{byte(bucket.GoLeft), 5, 1, 0, 3, 255, 255, 255, 0, 0, 0, 3, 3, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 5 {
			return
		}
		runOps(t, fuzzOptions(data), data[5:])
	})
}

// fuzzGrowths are the growth factors fuzzOptions picks from: the default,
// the bounds, and one factor in between that is not a power of two.
var fuzzGrowths = [...]float64{0, MinGrowth, 1.5, MaxGrowth}

// fuzzOptions decodes the first five bytes of a fuzz input into options:
// the rule, d, the bucket size (and, from the same byte's high bits, the
// growth factor), the hash family and the seed.
func fuzzOptions(data []byte) Options {
	rule := bucket.Placement(data[0] % byte(len(bucket.Placements())))
	d := int(data[1]%hashfn.MaxChoices) + 1
	if rule == bucket.OneChoice {
		d = 1
	} else if d == 1 {
		d = 2 // Placement 0 with Choices 1 would mean one choice
	}
	return Options{
		Placement:  rule,
		Choices:    d,
		BucketSize: int(data[2]%slotsPerBucket) + 1,
		Growth:     fuzzGrowths[data[2]/slotsPerBucket%byte(len(fuzzGrowths))],
		Hash:       hashfn.Kind(data[3] % 2),
		Seed:       uint64(data[4]) + 1,
	}
}

// seedOps returns n operations of three bytes each for a seed corpus
// entry, varied by c.
func seedOps(n int, c byte) []byte {
	ops := make([]byte, 0, 3*n)
	for i := range n {
		ops = append(ops, byte(i*7), byte(i*13), byte(i*31+int(c)))
	}
	return ops
}

// runOps applies the operations in ops to a string-keyed store and a Go
// map, and fails at the first difference. Each operation is 3 bytes: an
// opcode and a 16-bit key (from a space of 512 keys) that also gives the
// value.
func runOps(t *testing.T, o Options, ops []byte) {
	s := newTestStore[string, uint32](t, o)
	ref := make(map[string]uint32)
	for i := 0; i+3 <= len(ops); i += 3 {
		op := ops[i] % 16
		n := binary.LittleEndian.Uint16(ops[i+1:])
		k := fmt.Sprintf("key-%d", n%512)
		v := uint32(n) | uint32(i)<<16
		switch {
		case op < 6:
			s.Set(k, v)
			ref[k] = v
		case op == 6:
			got, loaded := s.GetOrSet(k, v)
			want, wok := ref[k]
			if !wok {
				want = v
				ref[k] = v
			}
			if loaded != wok || got != want {
				t.Fatalf("op %d: GetOrSet(%q, %d) = %d, %v; want %d, %v", i/3, k, v, got, loaded, want, wok)
			}
		case op < 11:
			got, ok := s.Get(k)
			want, wok := ref[k]
			if ok != wok || got != want {
				t.Fatalf("op %d: Get(%q) = %d, %v; want %d, %v", i/3, k, got, ok, want, wok)
			}
		case op < 14:
			_, wok := ref[k]
			if got := s.Delete(k); got != wok {
				t.Fatalf("op %d: Delete(%q) = %v, want %v", i/3, k, got, wok)
			}
			delete(ref, k)
		case op == 14:
			if s.Len() != len(ref) {
				t.Fatalf("op %d: Len = %d, want %d", i/3, s.Len(), len(ref))
			}
			if n%64 == 0 {
				s.Clear()
				clear(ref)
			}
		default:
			got := maps.Collect(s.All())
			if !maps.Equal(got, ref) {
				t.Fatalf("op %d: All yields %d entries, want %d", i/3, len(got), len(ref))
			}
			if keys := slices.Collect(s.Keys()); len(keys) != len(ref) || !all(keys, func(k string) bool { _, ok := ref[k]; return ok }) {
				t.Fatalf("op %d: Keys yields %d keys, want the %d of the reference", i/3, len(keys), len(ref))
			}
			if n%256 == 0 {
				// A snapshot of whatever state the operations left
				// (stashed keys, a growth under way) restores the same
				// entries in the same buckets; saving leaves s as it was.
				// Rare (one operation in 4096): a save and an open take
				// some 15 ms, 50 times a whole input's other operations.
				r, _ := saveOpen(t, s, nil)
				if got := maps.Collect(r.All()); !maps.Equal(got, ref) {
					t.Fatalf("op %d: the restored store holds %d entries, want %d", i/3, len(got), len(ref))
				}
				sameReport(t, s.Report(), r.Report())
			}
		}
	}
	if s.Len() != len(ref) {
		t.Fatalf("Len = %d, want %d", s.Len(), len(ref))
	}
	for k, want := range ref {
		if got, ok := s.Get(k); !ok || got != want {
			t.Fatalf("Get(%q) = %d, %v at the end; want %d", k, got, ok, want)
		}
	}
	if got := maps.Collect(s.All()); !maps.Equal(got, ref) {
		t.Fatalf("All yields %d entries at the end, want %d", len(got), len(ref))
	}
}

// all reports whether f holds for every element of s.
func all[E any](s []E, f func(E) bool) bool {
	return !slices.ContainsFunc(s, func(e E) bool { return !f(e) })
}
