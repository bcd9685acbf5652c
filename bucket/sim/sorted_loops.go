package sim

// The sorted mode's inner loops, one per shape of ball (sorted.go). Each
// draws words from stream state x until the state reaches end, places the
// balls they give, and returns the state after the last word it used: a
// word whose ball would raise a bin past 255 is put back (one golden step
// back), so the counts path draws it again.
//
// These loops are most of a small simulation's time and are bound by how
// many instructions they issue. On amd64 they are written in assembly
// (sorted_loops_amd64.s), the same steps in the same order, about a third
// fewer instructions than the compiler makes of the Go below (it reloads
// constants, spills the mask and zero-extends twice); elsewhere, and under
// the purego tag, the Go below runs. TestSortedLoopsMatchGo checks that
// the two leave the same bins, counters and state, stops included.
//
// Every index the Go loops take is either masked to a fixed array size or
// below the part's size by construction, which the assembly relies on
// instead of bounds checks: ranks are the top k bits of a word (k ≥ 1, as
// rankSource.split requires), a rank times size over 2^32, or masked by
// size-1 with size ≤ sortedMax; positions come from next, which stays
// within a part.

// oneLoopGo places one-candidate balls (OneChoice) in part 0 of 2^k bins,
// the rank being the top k bits of the ball's word.
func oneLoopGo(bins []uint8, next *[256]uint32, x, end uint64, k uint) uint64 {
	sh := (64 - k) & 63
	for x != end {
		x += golden
		if !raise(bins, next, bins[mix(x)>>sh]) {
			return x - golden
		}
	}
	return x
}

// max2LoopGo places two-candidate balls in one part of size bins (DChoice,
// d = 2): the ranks are the word's halves times size over 2^32, and the
// larger rank, from the larger half, is the less loaded candidate.
func max2LoopGo(bins []uint8, next *[256]uint32, x, end, size uint64) uint64 {
	for x != end {
		x += golden
		u := mix(x)
		if !raise(bins, next, bins[maxRank(u>>32, uint64(uint32(u)))*size>>32]) {
			return x - golden
		}
	}
	return x
}

// raise raises the fullest bin of load l in a one-part sorted array to
// l+1, or reports false, changing nothing, if l+1 would pass 255.
func raise(bins []uint8, next *[256]uint32, l uint8) bool {
	e := l + 1
	if e == 0 {
		return false
	}
	p := next[e]
	bins[p] = e
	next[e] = p + 1
	return true
}

// pairLoopGo places balls with one candidate in each of two parts of
// mask+1 bins (Halves and GoLeft, d = 2), one word a ball, deciding by the
// rule's pairTable: splitParts by hand, ranks from bits 32 up and 0 up,
// and the coin bit 63 picking the half of the table.
func pairLoopGo(bins *[2 * sortedMax]uint8, next *[512]uint32, t *pairTable, x, end, mask uint64) uint64 {
	for x != end {
		x += golden
		u := mix(x)
		a, b := bins[u>>32&mask&(sortedMax-1)], bins[sortedMax+u&mask&(sortedMax-1)]
		q := t[u>>63][uint16(a)<<8|uint16(b)]
		if uint8(q) == 0 {
			return x - golden
		}
		q &= 511
		p := next[q]
		bins[p&(2*sortedMax-1)] = uint8(q)
		next[q] = p + 1
	}
	return x
}

// halvesLoopGo is pairLoopGo with two balls a word (the rank source's
// halves mode, parts of at most 2^16 bins): ball 2i from the high half,
// ranks at bits 48 and 32 and coin bit 63, ball 2i+1 from the low half,
// ranks at bits 16 and 0 and coin bit 31. It returns why it stopped as
// well: on stopFirst the last word is put back, on stopSecond its first
// ball is placed and the state is past it.
func halvesLoopGo(bins *[2 * sortedMax]uint8, next *[512]uint32, t *pairTable, x, end, mask uint64) (uint64, int) {
	mask &= 1<<16 - 1
	for x != end {
		x += golden
		u := mix(x)
		a, b := bins[u>>48&mask], bins[sortedMax+u>>32&mask]
		q := t[u>>63][uint16(a)<<8|uint16(b)]
		if uint8(q) == 0 {
			return x - golden, stopFirst
		}
		q &= 511
		p := next[q]
		bins[p&(2*sortedMax-1)] = uint8(q)
		next[q] = p + 1
		a, b = bins[u>>16&mask], bins[sortedMax+u&mask]
		q = t[u>>31&1][uint16(a)<<8|uint16(b)]
		if uint8(q) == 0 {
			return x, stopSecond
		}
		q &= 511
		p = next[q]
		bins[p&(2*sortedMax-1)] = uint8(q)
		next[q] = p + 1
	}
	return x, stopDone
}

// The paired loops' Go twins (paired.go): each places up to words words
// of chain A and of chain B, A's bins in the first half of bins and B's in
// the second, a word of A's and then a word of B's, and stops at the first
// ball of either that would raise a bin past 255. It returns both states
// and stops, each as the loop it pairs would: the chain that stopped with
// its stop (stopFirst for a one-ball word put back), the other with
// stopDone at the end of its last whole word.

func halvesLoop2Go(bins *[4 * sortedMax]uint8, nextA, nextB *[512]uint32, t *pairTable, xA, xB, words, mask uint64) (uint64, uint64, int, int) {
	bA, bB := pairHalves(bins)
	return interleave(xA, xB, words,
		func(x uint64) (uint64, int) { return halvesLoopGo(bA, nextA, t, x, x+golden, mask) },
		func(x uint64) (uint64, int) { return halvesLoopGo(bB, nextB, t, x, x+golden, mask) })
}

func oneLoop2Go(bins *[4 * sortedMax]uint8, nextA, nextB *[256]uint32, xA, xB, words uint64, k uint) (uint64, uint64, int, int) {
	bA, bB := pairHalves(bins)
	return interleave(xA, xB, words,
		func(x uint64) (uint64, int) { return oneWord(x, oneLoopGo(bA[:], nextA, x, x+golden, k)) },
		func(x uint64) (uint64, int) { return oneWord(x, oneLoopGo(bB[:], nextB, x, x+golden, k)) })
}

func max2Loop2Go(bins *[4 * sortedMax]uint8, nextA, nextB *[256]uint32, xA, xB, words, size uint64) (uint64, uint64, int, int) {
	bA, bB := pairHalves(bins)
	return interleave(xA, xB, words,
		func(x uint64) (uint64, int) { return oneWord(x, max2LoopGo(bA[:], nextA, x, x+golden, size)) },
		func(x uint64) (uint64, int) { return oneWord(x, max2LoopGo(bB[:], nextB, x, x+golden, size)) })
}

// pairHalves returns chain A's and chain B's halves of a paired loop's bins.
func pairHalves(bins *[4 * sortedMax]uint8) (a, b *[2 * sortedMax]uint8) {
	return (*[2 * sortedMax]uint8)(bins[:2*sortedMax]), (*[2 * sortedMax]uint8)(bins[2*sortedMax:])
}

// interleave takes state xA and then xB one word forward with its step,
// words times, and stops at the first word that stops.
func interleave(xA, xB, words uint64, stepA, stepB func(x uint64) (uint64, int)) (uint64, uint64, int, int) {
	for range words {
		x, stop := stepA(xA)
		if xA = x; stop != stopDone {
			return xA, xB, stop, stopDone
		}
		x, stop = stepB(xB)
		if xB = x; stop != stopDone {
			return xA, xB, stopDone, stop
		}
	}
	return xA, xB, stopDone, stopDone
}

// oneWord turns the state x0 that a one-ball loop was given for one word,
// and the state x it returned, into interleave's step: a word put back (x
// = x0) is a stop.
func oneWord(x0, x uint64) (uint64, int) {
	if x == x0 {
		return x, stopFirst
	}
	return x, stopDone
}
