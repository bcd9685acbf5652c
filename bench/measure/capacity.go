package measure

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Capacity is the size of a bounded cache: a number of entries, or a share
// of the workload's distinct keys (so that one default suits a Zipf
// workload over a million keys and a trace of a few thousand blocks).
type Capacity struct {
	Entries int     // entries, when Share is 0
	Share   float64 // a fraction of the distinct keys, in (0, 1]
}

// MaxCapacity bounds a capacity in entries, given or resolved from a
// share: every cache holds that many entries in memory (about 100 bytes
// each, several caches at once during the hit-ratio replays), and the
// replays' warm-up and the memory fill take requests and keys in
// proportion. 1% of --keys 10^10 made otter panic in makeslice or ran the
// process out of memory. The README's comparisons stop at 10^6.
const MaxCapacity = 1 << 24

// Entries returns a capacity of n entries.
func Entries(n int) Capacity { return Capacity{Entries: n} }

// ParseCapacity reads a capacity: a number of entries ("10000") or a
// percentage of the distinct keys ("1%", "0.5%"), spaces around it
// ignored. Errors wrap ErrConfig. A list of them goes through
// internal/cli's ParseList, which refuses repeats, as bench's --capacity
// does.
func ParseCapacity(f string) (Capacity, error) {
	f = strings.TrimSpace(f)
	if p, ok := strings.CutSuffix(f, "%"); ok {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || !(v > 0 && v <= 100) {
			return Capacity{}, fmt.Errorf("%w: capacity %q: want a percentage in (0, 100]", ErrConfig, f)
		}
		return Capacity{Share: v / 100}, nil
	}
	n, err := strconv.Atoi(f)
	if err != nil || n < 1 {
		return Capacity{}, fmt.Errorf("%w: capacity %q: want a number of entries ≥ 1 or a percentage such as 1%%", ErrConfig, f)
	}
	if n > MaxCapacity {
		return Capacity{}, fmt.Errorf("%w: capacity %d: at most %d entries", ErrConfig, n, MaxCapacity)
	}
	return Capacity{Entries: n}, nil
}

// String returns "10000" or "1%".
func (c Capacity) String() string {
	if c.Share > 0 {
		return strconv.FormatFloat(100*c.Share, 'g', -1, 64) + "%"
	}
	return strconv.Itoa(c.Entries)
}

// Resolve returns the capacity in entries for a workload of distinct keys:
// a share is rounded to the nearest entry (25% of 1,011 keys is 253
// entries), and at least 1.
func (c Capacity) Resolve(distinct int) int {
	if c.Share == 0 {
		return c.Entries
	}
	return max(1, int(math.Round(c.Share*float64(distinct))))
}

func (c Capacity) valid() bool {
	return c.Share == 0 && c.Entries >= 1 && c.Entries <= MaxCapacity || c.Share > 0 && c.Share <= 1
}
