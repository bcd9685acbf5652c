package store

// Relocation's trial: a cache relocates from the first evidence on, and
// keeps relocating only if its relocating twin earns it.
//
// Relocation is the setting whose evidence comes slowest where it pays
// most. On the short traces of bench --corpus (6,000 to 16,000 Gets) the
// twin clears the bar of zSwitch only after 2.5 to 8 capacities of
// inserts, and the rows it would lift are over by then; a lower bar turns
// it on by chance where the twin only ties. So the cache does not wait
// for a clear lead before it tries: when the shadows end their first
// period (the first evidence that the cache is read, not only written),
// relocation turns on for a trial, which the twin's long memory (duel.go)
// decides:
//
//   - it fails as soon as the twin trails by trialBar (z ≤ −2): the
//     workload is one where a wider sample evicts keys worth keeping;
//   - otherwise, once the twin and the miniature of the ranking in use
//     have differed on trialGets sampled Gets, relocation stays on if the
//     twin leads by trialBar (z ≥ 2), and turns off if not.
//
// After the trial the usual rule (shadow.go) takes over: relocation
// turns on again at a lead past zSwitch and off at a deficit past it. A
// cache that is only written never ends a period and never tries; a cache
// whose policy cannot relocate (d ≠ 2, or a weight bound) tries to no
// effect.
//
// trialGets is where McNemar's z means something: over 200 differing
// Gets a twin that wins 57% of them leads by z = 2, and one that only
// ties reaches z = 2 by chance once in 44 trials by the normal law (16 of
// 600 seeds of TestRelocationAdapts's uniform draws, one in 37).
//
// On bench --corpus the trial lifts the 48 trace rows by 4.8 points in
// sum (lirs/gli, multi2 at 25% +1.0, multi1 at 1% +0.7) and the 8 Zipf
// rows by 1.0 (Zipf 0.6 at 10% +0.4, which brings it within half a point
// of otter); it costs 0.3 over the 12 aging rows (aging:1 at 25%) and P12
// at 25% 0.25. Without the early failure, large caches (which replay 1
// key in 256 or fewer, so reach trialGets late) kept relocating through
// most of the aging streams and lost 1.1 there.
//
// What the trial costs is CPU while it runs: an evicting Set that
// relocates takes several times as long (BenchmarkRelocation). On Zipf
// 1.0 over 1M keys at a cache of 1% the twin leads by a few tenths of a
// point and relocation stays on; the cache without the trial reaches the
// same setting a few seconds into such a run, when its long memory clears
// zSwitch.

// trial is where relocation's trial stands.
type trial uint8

const (
	trialPending trial = iota // no period has ended yet
	trialRunning
	trialDone
)

// The trial's bar and the differing Gets it waits for (see above).
const (
	trialBar  = 2
	trialGets = 200
)

// runTrial moves relocation's trial on at the end of a period. The caller
// holds sh.mu.
func (sh *shadows) runTrial() {
	switch sh.trial {
	case trialPending:
		sh.trial = trialRunning
		if !sh.pol.moves.Load() {
			sh.pol.moves.Store(true)
			sh.log(PolicyChange{Kind: changeRelocation, From: "off", To: "on", Lead: sh.twinDuel.longLead(), Trial: true})
		}
	case trialRunning:
		if !sh.pol.moves.Load() {
			sh.trial = trialDone // the usual rule turned it off
			return
		}
		d := &sh.twinDuel
		z := d.longLead()
		if z > -trialBar && d.long[0]+d.long[1] < trialGets {
			return
		}
		sh.trial = trialDone
		if z < trialBar {
			sh.pol.moves.Store(false)
			sh.log(PolicyChange{Kind: changeRelocation, From: "on", To: "off", Lead: z, Trial: true})
		}
	}
}
