package store

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/keyset"
	"github.com/twochoice/twochoice/internal/zipf"
)

// BenchmarkGetStages takes a Map's Get of present keys apart, to show
// where its time goes against the Go map's: each stage does the work of
// the ones before it and one step more, on the same loop of keys.
//
//	stage=hash     hash the key: the first touch of its bytes
//	stage=headers  and load the control word of each candidate bucket
//	stage=lookup   and find the key: the table's whole lookup, its
//	               prefetches and the slot read included
//	stage=get      Map.Get: the lookup, the table pointer and the hit count
//	peer=map       a Go map's lookup of the same keys (hashing included)
//	peer=rwmap     the same behind a sync.RWMutex's read lock
//
// A stage's time less the one before it is what its step adds in a loop
// of independent Gets, where the processor overlaps the misses of several
// Gets at once: a step that adds work or lines to fetch also lowers that
// overlap. The keys are keyset.Synthetic's (1M, or 4,096 with -short),
// drawn uniformly or by Zipf's law (s = 1) over ranks in a random order.
func BenchmarkGetStages(b *testing.B) {
	n, reqs := 1<<20, 1<<22
	if testing.Short() {
		n, reqs = 1<<12, 1<<16
	}
	keys := keyset.Synthetic(n, 1)
	m, err := NewMap[string, int64](MapOptions{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	gm := make(map[string]int64, n)
	for i, k := range keys {
		m.Set(k, int64(i))
		gm[k] = int64(i)
	}
	var mu sync.RWMutex
	t := m.tabs.Load().cur
	for _, access := range []string{"uniform", "zipf"} {
		seq := stageKeys(b, keys, reqs, access)
		mask := len(seq) - 1
		stages := []struct {
			name string
			get  func(k string) uint64
		}{
			{"stage=hash", func(k string) uint64 { return t.hash(k) }},
			{"stage=headers", func(k string) uint64 {
				var c [hashfn.MaxChoices]uint64
				var x uint64
				for _, i := range t.cands(t.hash(k), &c) {
					x += t.hdr(i).ctrl.Load()
				}
				return x
			}},
			{"stage=lookup", func(k string) uint64 {
				h := t.hash(k)
				v, _ := t.get(k, h, tagOf(h))
				return uint64(v)
			}},
			{"stage=get", func(k string) uint64 {
				v, _ := m.Get(k)
				return uint64(v)
			}},
			{"peer=map", func(k string) uint64 { return uint64(gm[k]) }},
			{"peer=rwmap", func(k string) uint64 {
				mu.RLock()
				v := gm[k]
				mu.RUnlock()
				return uint64(v)
			}},
		}
		for _, st := range stages {
			b.Run(fmt.Sprintf("access=%s/%s", access, st.name), func(b *testing.B) {
				var sum uint64
				for i := 0; i < b.N; i++ {
					sum += st.get(seq[i&mask])
				}
				stageSink = sum
			})
		}
	}
}

// stageSink keeps the stages' results alive.
var stageSink uint64

// stageKeys returns reqs draws from keys (a power of two of them), uniform
// or by Zipf's law over the keys in a random order, seeded.
func stageKeys(b *testing.B, keys []string, reqs int, access string) []string {
	rng := rand.New(rand.NewPCG(4, 5))
	perm := rng.Perm(len(keys))
	next := func() uint64 { return rng.Uint64N(uint64(len(keys))) }
	if access == "zipf" {
		z, err := zipf.New(1, uint64(len(keys)), 6)
		if err != nil {
			b.Fatal(err)
		}
		next = z.Next
	}
	seq := make([]string, reqs)
	for i := range seq {
		seq[i] = keys[perm[next()]]
	}
	return seq
}
