package near

import (
	"math"
	"unsafe"
)

// maxWeight returns the bound in bytes of a near-cache of options o, as
// the cache's bound in weight: MaxBytes, or DefaultMaxBytes when o sets
// no bound (as capacity reads it).
func maxWeight(o Options) uint64 {
	if o.MaxEntries == 0 && o.MaxBytes == 0 {
		return DefaultMaxBytes
	}
	return uint64(max(o.MaxBytes, 0))
}

// weigher returns the weight in bytes of a key's entry: its slot in the
// cache's table, the key's bytes and, for each reply of its chain, the
// reply's struct, its command's bytes and the message's size by size (or
// assumedPayloadBytes without it). The chain is immutable once stored, so
// the weight the cache keeps beside the entry stays true.
func weigher[M any](size func(*M) int) func(string, *reply[M]) uint32 {
	slot := slotBytes[string, *reply[M]]()
	fixed := int64(unsafe.Sizeof(reply[M]{}))
	return func(k string, r *reply[M]) uint32 {
		w := slot + int64(len(k))
		for ; r != nil; r = r.more {
			p := int64(assumedPayloadBytes)
			if size != nil {
				p = int64(size(&r.msg))
			}
			w += fixed + int64(len(r.cmd)) + p
		}
		return uint32(min(w, math.MaxUint32))
	}
}
