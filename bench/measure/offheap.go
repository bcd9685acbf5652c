package measure

import (
	"io"
	"reflect"
	"unsafe"

	"github.com/twochoice/twochoice/bench/caches"
	"github.com/twochoice/twochoice/bench/workload"
)

// arena holds a run's request streams. Streams of integer keys hold no
// pointers, so they are kept outside the Go heap where the system allows
// (see mapMemory): tens of megabytes of requests would otherwise count
// in the live heap that paces the garbage collector, and a cache that
// allocates would be collected less often than in a program whose heap is
// mostly the cache. Streams of string keys point into the heap and stay
// there.
type arena[K caches.Key] struct {
	release []func()
}

// make returns room for n requests.
func (a *arena[K]) make(n int) []workload.Request[K] {
	// Under the race detector streams stay in the Go heap: it watches only
	// memory it knows.
	if n == 0 || raceEnabled || reflect.TypeFor[K]().Kind() == reflect.String {
		return make([]workload.Request[K], n)
	}
	size := uintptr(n) * unsafe.Sizeof(workload.Request[K]{})
	b, free, ok := mapMemory(size)
	if !ok {
		return make([]workload.Request[K], n)
	}
	a.release = append(a.release, free)
	return unsafe.Slice((*workload.Request[K])(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// clone returns a copy of reqs in the arena.
func (a *arena[K]) clone(reqs []workload.Request[K]) []workload.Request[K] {
	out := a.make(len(reqs))
	copy(out, reqs)
	return out
}

// collect reads n requests from w into the arena, or fewer if w ends.
func (a *arena[K]) collect(w workload.Workload[K], n int) ([]workload.Request[K], error) {
	out := a.make(n)
	got := 0
	for got < n {
		m, err := w.Read(out[got:min(n, got+workload.BatchSize)])
		got += m
		if err == io.EOF {
			break
		}
		if err != nil {
			return out[:got], err
		}
	}
	return out[:got], nil
}

// free returns the arena's memory to the system. No stream of it may be
// used afterwards.
func (a *arena[K]) free() {
	for _, f := range a.release {
		f()
	}
	a.release = nil
}
