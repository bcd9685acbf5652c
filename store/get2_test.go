package store

import (
	"testing"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/internal/keyset"
)

// get2Options are the stores the get2 tests run: one of each candidate
// scheme (parts, independent, double hashing), d = 2.
var get2Options = []Options{
	{Seed: 1, Placement: bucket.GoLeft},
	{Seed: 2, Placement: bucket.DChoice},
	{Seed: 3, Placement: bucket.DoubleHash},
}

// skipWithoutGet2 skips a test of get2's optimistic path in builds that
// do not take it.
func skipWithoutGet2(t *testing.T) {
	t.Helper()
	if !optimisticReads {
		t.Skip("purego build: slots are read under the bucket's lock, not by get2's optimistic path")
	}
}

// TestGet2TagFalsePositives: get2 reads a candidate's slots only when its
// tags match. A key in the second candidate whose first candidate holds
// another key with the same tag must still be found: get2 must go on to
// the second candidate after a false match in the first, not stop at the
// first candidate whose tags matched. The test checks that the store holds
// keys in each candidate and keys behind a false match, so that it
// exercises each path, for each candidate scheme (parts, independent,
// double hashing).
func TestGet2TagFalsePositives(t *testing.T) {
	skipWithoutGet2(t)
	for _, o := range get2Options {
		s := newTestMapOf[string, int](t, o)
		keys := keyset.Synthetic(20000, 3)
		for i, k := range keys {
			s.Set(k, i)
		}
		tb := s.tabs.Load().cur
		if tb.d != 2 || tb.lay.words == 0 {
			t.Fatalf("options %+v: want the optimistic two-choice path", o)
		}
		var in0, in1, falsePos int
		for i, k := range keys {
			h := s.hash(k)
			tag := tagOf(h)
			c0, c1 := tb.cand2(h)
			switch {
			case tb.bucket(c0).find(k, tag) >= 0:
				in0++
			case tb.bucket(c1).find(k, tag) >= 0:
				in1++
				if ctrl(tb.bucket(c0).ctrl.Load()).match(tag) != 0 {
					falsePos++
				}
			}
			if v, ok := s.Get(k); !ok || v != i {
				t.Fatalf("options %+v: Get(%q) = %d, %v; want %d, true", o, k, v, ok, i)
			}
		}
		if in0 == 0 || in1 == 0 || falsePos == 0 {
			t.Fatalf("options %+v: keys in the first candidate %d, in the second %d, of those behind a false tag match %d: want some of each",
				o, in0, in1, falsePos)
		}
	}
}

// TestGet2StashedKeysBehindNoTagMatch: get2 answers "absent" without
// get2Rest when neither candidate has a tag match and the first
// candidate's stash hint is 0. A stashed key's candidates were full, and
// usually of other tags, so it is found only through the hint: every
// stashed key must still be found, and keys never set must not be. The
// table is pinned (as a running All loop pins it) so that it does not
// grow and the keys set past its capacity go to the stash.
func TestGet2StashedKeysBehindNoTagMatch(t *testing.T) {
	skipWithoutGet2(t)
	for _, o := range get2Options {
		s := newTestMapOf[string, int](t, o)
		tb := s.pin()
		keys := keyset.Synthetic(2*int(tb.n)*tb.size, 4)
		for i, k := range keys {
			s.Set(k, i)
		}
		var noMatch int
		for _, e := range tb.stash.entries() {
			h := s.hash(e.key)
			tag := tagOf(h)
			c0, c1 := tb.cand2(h)
			if ctrl(tb.bucket(c0).ctrl.Load()).match(tag)|ctrl(tb.bucket(c1).ctrl.Load()).match(tag) == 0 {
				noMatch++
			}
		}
		for i, k := range keys {
			if v, ok := s.Get(k); !ok || v != i {
				t.Fatalf("options %+v: Get(%q) = %d, %v; want %d, true", o, k, v, ok, i)
			}
			if v, ok := s.Get("absent:" + k); ok {
				t.Fatalf("options %+v: Get of a key never set found %d", o, v)
			}
		}
		s.unpin()
		if noMatch == 0 {
			t.Fatalf("options %+v: no stashed key has candidates without a tag match: the test misses the path", o)
		}
	}
}
