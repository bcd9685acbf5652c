package storebench

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/twochoice/twochoice/internal/keyset"
)

// The absent-key benchmark: Gets of keys the store does not hold, the
// existence check or negative lookup of a Go map replacement. A miss takes
// another path through the table than a hit (get2 hands it to get2Rest,
// which also looks at the stash hint), so BenchmarkGetRatio, whose keys
// are all present, does not measure it.
//
//	go test -c -o /tmp/storebench.test ./bench/storebench
//	for i in $(seq 10); do flock /tmp/twochoice-bench.lock \
//	  /tmp/storebench.test -test.run '^$' -test.bench 'GetAbsentRatio' -test.count 1 >> absent.txt; done

var (
	absentOnce sync.Once
	absentWl   workload
)

// getAbsentWorkload returns the Get workload's access sequence over keys
// that are never inserted: the next len(w.keys) keys of the same
// generator and seed. keyset.Synthetic draws each key in turn from one
// stream and writes its index into it, so Synthetic(2n, 1) begins with
// Synthetic(n, 1), the present keys, and its second half shares their
// shapes and lengths but none of their strings.
func getAbsentWorkload(b *testing.B) workload {
	w := getWorkload(b)
	absentOnce.Do(func() {
		n := len(w.keys)
		all := keyset.Synthetic(2*n, 1)
		if !slices.Equal(all[:n], w.keys) {
			panic("keyset.Synthetic(2n) no longer begins with Synthetic(n): the absent keys may be present")
		}
		absentWl = newWorkload(all[n:], w.access)
	})
	return absentWl
}

// BenchmarkGetAbsentRatio: Get of absent keys, paired against the RWMutex
// map as in BenchmarkGetRatio: both hold the Get workload's 2^20 present
// keys (4096 with -short), and both look up 2^20 (4096) other keys of the
// same generator with the same Zipf 1.0 access sequence, on 1 and 2
// goroutines. x-peer is twochoice's time over the map's; below 1 is
// faster. A Get that finds its key panics, so the keys are known absent.
func BenchmarkGetAbsentRatio(b *testing.B) {
	w := getWorkload(b)
	// Built by the first sub-benchmark, as in BenchmarkGetRatio.
	build := func(j int) func() cache {
		return sync.OnceValue(func() cache {
			c := peers[j].make(len(w.keys))
			for i, k := range w.keys {
				c.Set(k, int64(i))
			}
			return c
		})
	}
	tc, rw := build(0), build(1)
	if peers[1].name != "rwmap" {
		b.Fatalf("peers[1] is %s, want rwmap", peers[1].name)
	}
	for _, g := range []int{1, 2} {
		b.Run(fmt.Sprintf("vs=rwmap/goroutines=%d", g), func(b *testing.B) {
			a := getAbsentWorkload(b)
			b.ReportAllocs()
			pairedOps(b, g, tc(), rw(), a, func(c cache, k string, _ int) int64 {
				v, ok := c.Get(k)
				if ok {
					panic("absent key found: " + k)
				}
				return v
			})
		})
	}
}
