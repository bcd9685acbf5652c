package store

import (
	"testing"
	"unsafe"
)

// Two stripes' counters, and stripe 0's and the Store fields before it,
// never share a cache line, whatever the alignment of counters within
// Store: a line of padding leads the array, and each stripe's counters are
// followed by more than a line of padding. The same for the eviction
// clock's stripes (ticks).
func TestStripesApartAtAnyAlignment(t *testing.T) {
	var c counters
	var st stripe
	used := unsafe.Offsetof(st.deletes) + unsafe.Sizeof(st.deletes)
	if pad := unsafe.Sizeof(st) - used; pad < cacheLine {
		t.Errorf("a stripe's counters take %d bytes and its padding %d: two stripes may share a line", used, pad)
	}
	if lead := unsafe.Offsetof(c.stripes); lead < cacheLine {
		t.Errorf("%d bytes lead the stripes: stripe 0 may share a line with the fields before it", lead)
	}
}

func TestTickStripesApartAtAnyAlignment(t *testing.T) {
	var c ticks
	var st tickStripe
	if pad := unsafe.Sizeof(st) - unsafe.Sizeof(st.n); pad < cacheLine {
		t.Errorf("a tick stripe's padding is %d bytes: two stripes may share a line", pad)
	}
	if gap := unsafe.Offsetof(c.local) - unsafe.Sizeof(c.global); gap < cacheLine {
		t.Errorf("%d bytes between the shared count and the stripes: they may share a line", gap)
	}
}
