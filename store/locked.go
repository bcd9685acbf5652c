package store

import (
	"slices"

	"github.com/twochoice/twochoice/hashfn"
)

// locked is the set of buckets a writer holds: a key's distinct
// candidates, in increasing order, so that two writers never wait for each
// other in a cycle. A map's writers (fastpath.go) and a cache's (cache.go)
// take their candidates this way.
type locked struct {
	idx [hashfn.MaxChoices]uint64
	n   int
}

// set makes lk the distinct buckets of cs, in increasing order.
func (lk *locked) set(cs []uint64) {
	lk.n = copy(lk.idx[:], cs)
	if lk.n == 2 {
		if lk.idx[0] > lk.idx[1] {
			lk.idx[0], lk.idx[1] = lk.idx[1], lk.idx[0]
		} else if lk.idx[0] == lk.idx[1] {
			lk.n = 1
		}
	} else if lk.n > 2 {
		slices.Sort(lk.idx[:lk.n])
		lk.n = len(slices.Compact(lk.idx[:lk.n]))
	}
}
