package store

import "github.com/twochoice/twochoice/hashfn"

// Peek returns the value stored for k and whether there is one, without
// counting as a use: an expired entry is not returned, as Get does not
// return one, but Peek leaves it where it is (Len counts it until a Get,
// Set or Delete of k, or an eviction, removes it). Peek counts no hit and
// no miss in Stats, calls no StatsRecorder, leaves the entry's policy word
// as it was (so the eviction policy does not see the read) and does not
// show the read to the miniature caches that choose the policy. It reads
// as Get does, taking no lock.
//
// It is for looks that are not demand, whose reads should not keep an
// entry cached: a debug page, a check before a write.
func (s *Cache[K, V]) Peek(k K) (V, bool) {
	t := s.tab.Load()
	h := t.hash(k)
	tag := tagOf(h)
	ttl := s.ttl.Load()
	var c [hashfn.MaxChoices]uint64
	for _, i := range t.cands(h, &c) {
		if ctrl(t.cbucket(i).b.ctrl.Load()).match(tag) == 0 {
			continue
		}
		if f, ok := t.lookup(i, k, tag, ttl); ok {
			if f.exp != 0 && f.exp <= s.nowNanos() {
				break
			}
			return f.val, true
		}
	}
	var zero V
	return zero, false
}
