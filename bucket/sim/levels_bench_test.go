package sim

import (
	"fmt"
	"testing"

	"github.com/twochoice/twochoice/bucket"
)

func BenchmarkLevelsProto(b *testing.B) {
	for _, rule := range []bucket.Placement{bucket.OneChoice, bucket.DChoice, bucket.Halves, bucket.GoLeft} {
		d := 2
		if rule == bucket.OneChoice {
			d = 1
		}
		for _, lg := range []int{20, 30, 36} {
			b.Run(fmt.Sprintf("%v/2^%d", rule, lg), func(b *testing.B) {
				n := uint64(1) << lg
				c := newLevelsChain(rule, d, n)
				g := newStream(1)
				// warm to m = n/2 equivalent shape: throw in chunks
				b.ResetTimer()
				c.throw(uint64(b.N), &g)
			})
		}
	}
}
