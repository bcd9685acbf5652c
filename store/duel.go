package store

import "math"

// A duel is the running comparison of a challenger miniature with the
// miniature of the cache's current policy (shadow.go): the sampled Gets
// the challenger hit and the other missed (its wins) and the other way
// round (its losses), kept over two memories.
//
// The short memory decays by shadowDecay every period (some 75 periods),
// so a change of workload shows in it within a few periods. The long one
// decays by longDecay (some 7,700 periods), so a lead too small to clear
// the bar in 75 periods clears it once enough requests have been seen: a
// miniature samples 1 in up to 256 keys, and a lead of a few tenths of a
// point, real and steady, needs tens of thousands of sampled Gets to
// stand out from the noise (duel_test.go). On bench --corpus the long
// memory turns relocation on where the short one left it off, on small
// caches of lirs/multi1, multi2, cpp and loop and on Zipf at 1% of the
// keys (where it also takes the long prior at s = 1.0): +2.3 points in
// sum over the 48 trace rows and +1.2 over the 8 Zipf rows, no row
// lower. What relocation costs where it is on: docs/performance.md.
//
// The lead is McNemar's z of the short memory when it clears zSwitch
// either way, and the long memory's otherwise: recent evidence overrules
// old. When the cache acts on the short memory against the long one, the
// long one is of a workload that has changed, so it is cleared;
// otherwise, after the short memory moved the cache, the long one, still
// full of the old workload, would move it back as soon as the short
// one's lead fell under the bar.
type duel struct {
	short, long [2]float64 // wins and losses
}

// longDecay is the long memory's decay a period: a hundred times the
// short memory's span.
const longDecay = 0.99987

// count counts a sampled Get on which the challenger hit or not (ch) and
// the current policy's miniature hit or not (cur).
func (d *duel) count(ch, cur bool) {
	switch {
	case ch && !cur:
		d.short[0]++
		d.long[0]++
	case cur && !ch:
		d.short[1]++
		d.long[1]++
	}
}

// lead returns the challenger's lead in standard deviations (see duel).
func (d *duel) lead() float64 {
	if zs := lead(d.short[0], d.short[1]); math.Abs(zs) > zSwitch {
		return zs
	}
	return d.longLead()
}

// longLead returns the challenger's lead over the long memory alone.
func (d *duel) longLead() float64 { return lead(d.long[0], d.long[1]) }

// acted is called when the cache has acted on the lead: if the short
// memory overruled the long one, the long one is cleared (see duel).
func (d *duel) acted() {
	zs, zl := lead(d.short[0], d.short[1]), lead(d.long[0], d.long[1])
	if math.Abs(zs) > zSwitch && zs*zl < 0 {
		d.long = [2]float64{}
	}
}

// decay ends a period.
func (d *duel) decay() {
	for i := range 2 {
		d.short[i] *= shadowDecay
		d.long[i] *= longDecay
	}
}

// swap makes the challenger the current policy and the other way round.
func (d *duel) swap() {
	d.short[0], d.short[1] = d.short[1], d.short[0]
	d.long[0], d.long[1] = d.long[1], d.long[0]
}
