package store

import (
	"math/rand/v2"
	"testing"
)

// duelRun plays periods of sampled Gets into d: in each, a Get is
// discordant with probability disc, and then the challenger wins it with
// probability pw. It stops at the first period whose lead clears the bar
// and returns the number of periods played (or periods, if none did).
// With short set, it clears the long memory every period, which leaves
// the short memory alone.
func duelRun(d *duel, rng *rand.Rand, periods, perPeriod int, disc, pw float64, short bool) int {
	for p := range periods {
		for range perPeriod {
			if rng.Float64() >= disc {
				d.count(true, true)
				continue
			}
			w := rng.Float64() < pw
			d.count(w, !w)
		}
		if short {
			d.long = [2]float64{}
		}
		if d.lead() > zSwitch {
			return p
		}
		d.decay()
	}
	return periods
}

// duels returns how many of n duels, played as duelRun plays them, clear
// the bar within the given periods.
func duels(rng *rand.Rand, n, periods int, disc, pw float64, short bool) int {
	c := 0
	for range n {
		var d duel
		if duelRun(&d, rng, periods, 48, disc, pw, short) < periods {
			c++
		}
	}
	return c
}

// TestDuelFindsSmallLeads checks that the long memory finds a lead the
// short one seldom can, without a looser bar: 5% of the 48 sampled Gets
// of a period discordant, 55% of those won by the challenger, a lead of
// half a point. The short memory holds some 180 discordant Gets, whose z
// is about 1.3 on average.
func TestDuelFindsSmallLeads(t *testing.T) {
	seed := seedFor(t)
	rng := rand.New(rand.NewPCG(seed, 1))
	const n, periods = 100, 2000
	both := duels(rng, n, periods, 0.05, 0.55, false)
	short := duels(rng, n, periods, 0.05, 0.55, true)
	fair := duels(rng, n, periods, 0.05, 0.5, false)
	t.Logf("of %d duels over %d periods, cleared the bar: a lead with both memories %d, with the short one alone %d; an even duel %d", n, periods, both, short, fair)
	if both < n*9/10 {
		t.Errorf("a lead of half a point cleared the bar in %d of %d duels", both, n)
	}
	if short > n/5 {
		t.Errorf("the short memory alone cleared the bar in %d of %d duels: the test's lead is too large to tell the memories apart", short, n)
	}
	if fair > n/20 {
		t.Errorf("an even duel cleared the bar in %d of %d duels", fair, n)
	}
}

// TestDuelForgetsAChangedWorkload checks that when the workload turns
// and the short memory moves the cache, the long memory's evidence of the
// old workload does not move it back.
func TestDuelForgetsAChangedWorkload(t *testing.T) {
	seed := seedFor(t)
	rng := rand.New(rand.NewPCG(seed, 2))
	var d duel
	// The challenger leads: the cache takes it.
	if p := duelRun(&d, rng, 5000, 48, 0.1, 0.7, false); p == 5000 {
		t.Fatal("a clear lead did not clear the bar")
	}
	d.acted()
	d.swap()
	// More of the same, long enough that the long memory holds a clear
	// lead of the new policy over the old.
	duelRun(&d, rng, 3000, 48, 0.1, 0.3, false)
	if z := lead(d.long[0], d.long[1]); z > -zSwitch {
		t.Fatalf("after the switch the long memory's lead is %.2f, want below −%d", z, zSwitch)
	}
	// The workload turns: the old policy (the challenger now) is better,
	// and the short memory moves the cache back.
	p := duelRun(&d, rng, 5000, 48, 0.1, 0.7, false)
	if p == 5000 {
		t.Fatal("the short memory did not follow the turn")
	}
	t.Logf("the turn moved the cache back after %d periods", p)
	d.acted()
	d.swap()
	// Then the two policies hit alike: no Get is discordant, so nothing
	// but the long memory of the workload before the turn could move
	// the cache again.
	if p := duelRun(&d, rng, 2000, 48, 0, 0.5, false); p < 2000 {
		t.Errorf("the cache moved again at period %d with nothing to tell the policies apart (long memory %v)", p, d.long)
	}
}
