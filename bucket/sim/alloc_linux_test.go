//go:build linux

package sim

import (
	"errors"
	"testing"
)

// Counters the kernel will not map are an error, not a fall-back to the Go
// heap, which cannot have them either and ends the process with "fatal
// error: out of memory" (as 'twochoice sim --log2 31 --rule double' did
// under ulimit -v 1000000). 2^44 four-byte counters are 64 TiB, which the
// kernel's overcommit heuristic refuses; where overcommit is unlimited the
// map succeeds, untouched, and is returned at once.
func TestAllocBinsRefused(t *testing.T) {
	bins, free, err := allocBins[uint32](1 << 44)
	if err != nil {
		if !errors.Is(err, ErrMemory) {
			t.Fatalf("error %v, want ErrMemory", err)
		}
		return
	}
	if len(bins) != 1<<44 {
		t.Fatalf("%d counters", len(bins))
	}
	free()
}
