package store

// The writers' gate of a map.
//
// A map's writers work on the table side by side, each holding only the
// buckets of its key, while the gate is open: an update locks the bucket
// that holds its key, an insert that finds room locks its key's
// candidates (fastpath.go). Whatever changes more than a key's buckets
// needs writers one at a time: a growth or a re-key, which moves keys
// between two tables; a snapshot, whose copy-on-write view the writers
// must feed; the stash, which any key may reach; Clear. Those close the
// gate: writers then take the map's mutex and the serialized path
// (map.go), as all writers did before there was a gate.
//
// Closing waits for the writers inside to leave. A writer enters by adding
// one to its stripe's count and then checking that the gate is open, and a
// closer marks the gate closed and then waits for every stripe's count to
// reach 0; both steps are sequentially consistent atomics, so either the
// writer sees the gate closed (and leaves at once, for the serialized
// path), or the closer sees the writer and waits for it. A writer inside
// never waits for the mutex, so a closer that holds it cannot deadlock
// with one. The counts sit in the counter stripes (counters.go), on the
// lines each goroutine already writes for its hits and misses: entering
// and leaving cost two uncontended atomic adds, where the mutex cost two
// contended ones. Stripes come from the goroutine's stack address
// (stripeHint), which a stack growth may move: a writer takes its hint
// once and leaves by the stripe it entered by.
//
// The gate is closed as long as a reason for it lasts: gateHolds counts
// them (a move under way, a snapshot view) besides the one-operation
// closes of the serialized path. All changes to it are made under the
// map's mutex.

// enter lets a writer with the given stripe hint in if the gate is open,
// and reports whether it did; it must then call leave with the same hint.
func (s *Map[K, V]) enter(hint uint64) bool {
	st := s.tot.stripe(hint)
	st.inflight.Add(1)
	if s.closed.Load() != 0 {
		st.inflight.Add(-1)
		return false
	}
	return true
}

// leave lets a writer out.
func (s *Map[K, V]) leave(hint uint64) { s.tot.stripe(hint).inflight.Add(-1) }

// closeGate closes the gate (once more, if it is closed) and waits until
// no writer is inside. The caller holds s.mu.
func (s *Map[K, V]) closeGate() {
	if s.closed.Add(1) > 1 {
		return // closed before, and so empty since
	}
	for i := range s.tot.stripes {
		for x := 0; s.tot.stripes[i].inflight.Load() != 0; x++ {
			backoff(x)
		}
	}
}

// openGate undoes one closeGate. The caller holds s.mu.
func (s *Map[K, V]) openGate() { s.closed.Add(-1) }
