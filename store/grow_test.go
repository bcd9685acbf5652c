package store

import (
	"flag"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/bucket/fluid"
	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/testutil"
)

// Each growth multiplies the table's size by Options.Growth, rounded up
// to a size the rule accepts, and the store holds what a Go map holds
// throughout.
func TestGrowthFactor(t *testing.T) {
	testutil.SkipOneGoroutine(t, "a growth per factor and rule")
	n := 60_000
	if testing.Short() {
		n = 15_000
	}
	rules := []struct {
		rule bucket.Placement
		d    int
	}{{bucket.GoLeft, 2}, {bucket.DChoice, 2}, {bucket.DoubleHash, 2}, {bucket.GoLeft, 3}}
	for _, r := range rules {
		for _, g := range []float64{MinGrowth, 1.5, 2, 3, MaxGrowth} {
			t.Run(fmt.Sprintf("%v/d=%d/growth=%v", r.rule, r.d, g), func(t *testing.T) {
				s := newTestMap[uint64, int](t, MapOptions{Placement: r.rule, Choices: r.d, Seed: 5, Growth: g})
				ref := make(map[uint64]int)
				sizes := []uint64{s.tabs.Load().cur.n}
				for i := range n {
					k := uint64(i)*0x9e3779b97f4a7c15 + 3
					s.Set(k, i)
					ref[k] = i
					if c := s.tabs.Load().cur.n; c != sizes[len(sizes)-1] {
						sizes = append(sizes, c)
					}
				}
				if len(sizes) < 4 {
					t.Fatalf("%d keys: sizes %v, want at least 3 growths", n, sizes)
				}
				if got := s.Stats().Grows; got != uint64(len(sizes)-1) {
					t.Errorf("Stats().Grows = %d, want %d (sizes %v)", got, len(sizes)-1, sizes)
				}
				for x := 1; x < len(sizes); x++ {
					prev, next := sizes[x-1], sizes[x]
					if want := grownSize(r.rule, r.d, prev, g); next != want {
						t.Errorf("growth %d: %d to %d buckets, want %d (%v times, rounded up to a size %v takes; sizes %v)", x, prev, next, want, g, r.rule, sizes)
					}
				}
				for k, v := range ref {
					if got, ok := s.Get(k); !ok || got != v {
						t.Fatalf("Get(%#x) = %d, %v; want %d", k, got, ok, v)
					}
				}
			})
		}
	}
}

// grownSize is the size a table of n buckets grows to by factor g, worked
// out from the rules' sizes (sizeAtLeast's documentation) rather than by
// calling it: at least n·g, then the next multiple of d for the rules
// with parts, and for double hashing n·g itself if it is a power of two,
// else the next prime.
func grownSize(rule bucket.Placement, d int, n uint64, g float64) uint64 {
	m := uint64(math.Ceil(float64(n) * g))
	switch rule {
	case bucket.Halves, bucket.GoLeft:
		for m%uint64(d) != 0 {
			m++
		}
	case bucket.DoubleHash:
		if m&(m-1) != 0 {
			for !hashfn.IsPrime(m) {
				m++
			}
		}
	}
	return m
}

// TestGrowthStartsAtItsThresholds: an unbounded store's table grows at
// the Set that takes its entries past maxUtilization × slots (the fluid
// limit's figure, computed here afresh), and not before: after every Set
// that starts no growth, the entries are within bounds, and so is the
// stash (16 + slots/4096) once a move under way has ended; the Set that
// starts one took the entries past their bound. A stash past its bound
// never makes the table grow: structured keys under a poor hash (the
// identity, both candidates one bucket, keys in a narrow range of it)
// crowd a few buckets and fill the stash, and the store re-keys instead
// (flood.go), after which random and structured keys grow alike.
func TestGrowthStartsAtItsThresholds(t *testing.T) {
	seed := seedFor(t)
	for _, c := range []struct {
		name       string
		o          Options
		keys       int
		structured bool
	}{
		{"random keys", Options{Placement: bucket.GoLeft, Choices: 2, BucketSize: 8}, 10000, false},
		{"random keys, d-choice, C=4", Options{Placement: bucket.DChoice, Choices: 3, BucketSize: 4}, 10000, false},
		{"structured keys, poor hash", Options{Placement: bucket.DChoice, Choices: 2, BucketSize: 8}, 4000, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			o.Seed = seed
			s := newTestMapOf[uint64, int](t, o)
			if c.structured {
				setHash(s, func(k uint64) uint64 { return k<<32 | k })
			}
			u := fluidThreshold(t, o.Placement, o.Choices, o.BucketSize)
			bounds := func(n uint64) (int, int) {
				slots := n * uint64(o.BucketSize)
				return int(u * float64(slots)), 16 + int(slots/4096)
			}
			rng := rand.New(rand.NewPCG(seed, 6))
			keys := c.keys
			if testing.Short() && !c.structured {
				keys /= 2
			}
			checked := 0
			for i := range keys {
				k := rng.Uint64()
				if c.structured {
					k = uint64(i) << 20 // candidate i·n/2^12 of n buckets
				}
				before := s.Stats()
				s.Set(k, i)
				after := s.Stats()
				if after.Grows == before.Grows {
					maxE, maxStash := bounds(uint64(after.Buckets))
					if !after.Growing && (after.Entries > maxE || after.Stash > maxStash) {
						t.Fatalf("Set %d: %d entries (bound %d), stash %d (bound %d) in %d buckets, and no growth",
							i, after.Entries, maxE, after.Stash, maxStash, after.Buckets)
					}
					continue
				}
				// The table that grew is the one Sets went to before.
				maxE, maxStash := bounds(uint64(before.Buckets))
				if after.Entries <= maxE {
					t.Fatalf("Set %d: growth started at %d entries (bound %d), stash %d before (bound %d), %d buckets",
						i, after.Entries, maxE, before.Stash, maxStash, before.Buckets)
				}
				if after.Buckets <= before.Buckets {
					t.Fatalf("Set %d: grew from %d to %d buckets", i, before.Buckets, after.Buckets)
				}
				checked++
			}
			rekeys := s.Stats().Rekeys
			if checked < 5 || c.structured != (rekeys > 0) {
				t.Fatalf("%d growths, %d re-keys", checked, rekeys)
			}
			t.Logf("%d growths, %d re-keys", checked, rekeys)
		})
	}
}

// After an iteration held the table for a long time while keys poured
// into the stash, one growth must take the table to a size that holds
// them, with the room a growth normally leaves. Single growth steps from the pinned size left each
// new table past its own threshold: every following Set of a new key
// finished the previous move and started the next growth, moving the whole
// stash again (13 Sets in a row of about 100 ms each, for 200,000 keys over
// a table sized for 1,000), where the documentation promises that no caller
// waits for a whole rehash.
func TestGrowthAfterLongPinSizesForTheEntries(t *testing.T) {
	s := newTestMap[int, int](t, MapOptions{Seed: 9})
	fillDuringPin(s, 100_000)
	before := s.Stats()
	s.Set(-1, -1) // the growth
	st := s.tabs.Load()
	if st.old == nil {
		t.Fatalf("no growth under way after the Set of a new key: %+v", s.Stats())
	}
	if free := st.cur.maxEntries - int64(s.Len()); free < st.cur.maxEntries/4 {
		t.Errorf("the new table of %d buckets holds %d entries, its threshold %d: it grows again at once", st.cur.n, s.Len(), st.cur.maxEntries)
	}
	for i := range 1000 {
		s.Set(-2-i, i)
	}
	if after := s.Stats(); after.Grows != before.Grows+1 {
		t.Errorf("%d growths in the 1,001 Sets after the pin, want 1 (%+v)", after.Grows-before.Grows, after)
	}
}

// fillDuringPin sets keys 0 … 999, then the keys up to n while an All
// holds the table from growing, and ends the All.
func fillDuringPin(s kv[int, int], n int) {
	for i := range 1000 {
		s.Set(i, i)
	}
	next, stop := iter.Pull2(s.All())
	next()
	for i := 1000; i < n; i++ {
		s.Set(i, i)
	}
	stop()
}

// During a long pin the next table is prepared at the size the growth
// after it will pick, a chunk per write, so that the Set that grows the
// table allocates nothing big: before, the prepared table had the size of
// one step, the growth wanted a bigger one, and that Set allocated the
// whole of it (about 25 ms for 200,000 keys).
func TestLongPinPreparesTheSizeTheGrowthPicks(t *testing.T) {
	for _, o := range []Options{
		{Seed: 11},
		{Seed: 12, Placement: bucket.DoubleHash},
		{Seed: 13, Placement: bucket.DChoice, Choices: 3, BucketSize: 4},
	} {
		s := newTestMapOf[int, int](t, o)
		fillDuringPin(s, 100_000)
		cur := s.tabs.Load().cur
		want := growTo(cfgOf(s), cur.n, cur.entries.Load())
		p := s.prep
		if p == nil || p.n != want || p.ready != len(p.hdrs) {
			got := "none"
			if p != nil {
				got = fmt.Sprintf("%d buckets, %d of %d chunks", p.n, p.ready, len(p.hdrs))
			}
			t.Errorf("%+v: after the pin the prepared table is %s; the growth wants %d buckets, whole", s.options(), got, want)
			continue
		}
		s.Set(-1, -1) // the growth
		if st := s.tabs.Load(); st.cur != p {
			t.Errorf("%+v: the growth did not take the prepared table (%d buckets, want %d)", s.options(), st.cur.n, want)
		}
		if err := s.checkInvariants(); err != nil {
			t.Fatalf("%+v: %v", s.options(), err)
		}
	}
}

// growLimit is the most entries for which growTo keeps its answer.
func TestGrowLimit(t *testing.T) {
	for _, o := range []Options{
		{Seed: 1},
		{Seed: 1, Placement: bucket.DoubleHash},
		{Seed: 1, Placement: bucket.DChoice, Choices: 3, BucketSize: 4},
		{Seed: 1, Placement: bucket.OneChoice, Choices: 1},
	} {
		o, err := o.resolve()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []uint64{4, 6, 97, 1000, 1 << 20} {
			n = sizeAtLeast(&o, n)
			maxE, _ := thresholds(&o, n)
			for e := maxE; e < 40*maxE; e = e*5/4 + 1 {
				next := growTo(&o, n, e)
				lim := growLimit(&o, n, next)
				if lim < e {
					t.Fatalf("%+v n=%d: growTo(%d) = %d but its limit is %d", o, n, e, next, lim)
				}
				if got := growTo(&o, n, lim); got != next {
					t.Fatalf("%+v n=%d: growTo(limit %d) = %d, want %d", o, n, lim, got, next)
				}
				if lim < math.MaxInt64 {
					if got := growTo(&o, n, lim+1); got == next {
						t.Fatalf("%+v n=%d: growTo(limit+1 = %d) = %d still", o, n, lim+1, got)
					}
				}
			}
		}
	}
}

// The stash a long pin left is moved a few keys per write, like the
// buckets, not all by the Set that starts the growth: that Set took 85 ms
// for 200,000 stashed keys. Throughout the move every key is found, Set
// and Delete of stashed keys work, and the invariants hold.
func TestGrowthMovesTheStashIncrementally(t *testing.T) {
	s := newTestMap[int, int](t, MapOptions{Seed: 10})
	for i := range 1000 {
		s.Set(i, i)
	}
	next, stop := iter.Pull2(s.All())
	next()
	const keys = 50_000
	for i := 1000; i < keys; i++ {
		s.Set(i, i)
	}
	stop()
	stashed := s.tabs.Load().cur.stash.len()
	s.Set(-1, -1) // the growth
	st := s.tabs.Load()
	if st.old == nil {
		t.Fatal("no growth under way after the Set of a new key")
	}
	if left := st.old.stash.len(); left < stashed*9/10 {
		t.Errorf("the Set that started the growth moved %d of %d stashed keys", stashed-left, stashed)
	}
	if err := s.checkInvariants(); err != nil {
		t.Fatalf("at the start of the growth: %v", err)
	}
	writes := 0
	for i := 0; s.tabs.Load().old != nil; i++ {
		writes++
		switch k := 1000 + i*7%(keys-1000); i % 3 {
		case 0:
			s.Set(k, k)
		case 1:
			if !s.Delete(k) {
				t.Fatalf("Delete(%d) found nothing during the move", k)
			}
			s.Set(k, k)
		default:
			s.Set(keys+i, keys+i)
			s.Delete(keys + i)
		}
		if i%97 == 0 {
			for j := range keys {
				if v, ok := s.Get(j); !ok || v != j {
					t.Fatalf("after %d writes of the move: Get(%d) = %d, %v", writes, j, v, ok)
				}
			}
			if err := s.checkInvariants(); err != nil {
				t.Fatalf("after %d writes of the move: %v", writes, err)
			}
		}
	}
	if writes < 100 {
		t.Errorf("the move took %d writes", writes)
	}
	for j := range keys {
		if v, ok := s.Get(j); !ok || v != j {
			t.Fatalf("after the move: Get(%d) = %d, %v", j, v, ok)
		}
	}
}

// A store given SizeHint h starts at the table that a store without one
// reaches after h Sets, and holds h keys without growing; past the hint
// it grows as any store does. Both stores hold what a Go map holds.
func TestSizeHint(t *testing.T) {
	rules := []struct {
		rule bucket.Placement
		d    int
	}{{bucket.OneChoice, 1}, {bucket.DChoice, 2}, {bucket.Halves, 2}, {bucket.GoLeft, 2}, {bucket.DoubleHash, 3}, {bucket.GoLeft, 4}}
	hints := []int{1, 1000, 50_000}
	if testing.Short() {
		hints = hints[:2]
	}
	for _, r := range rules {
		for _, kind := range []hashfn.Kind{hashfn.XXHash, hashfn.Tabulation} {
			for _, hint := range hints {
				name := fmt.Sprintf("%v/d=%d/%v/hint=%d", r.rule, r.d, kind, hint)
				t.Run(name, func(t *testing.T) {
					o := Options{Placement: r.rule, Choices: r.d, Hash: kind, Seed: 7}
					grown := newTestStore[uint64, int](t, o)
					o.SizeHint = hint
					sized := newTestMapOf[uint64, int](t, o)
					if got, want := sized.Report().Buckets, int(tableFor(cfgOf(sized), uint64(hint))); got != want {
						t.Fatalf("a new store with hint %d has %d buckets, want %d", hint, got, want)
					}
					ref := make(map[uint64]int)
					for i := range hint {
						k := uint64(i)*0x9e3779b97f4a7c15 + 1
						grown.Set(k, i)
						sized.Set(k, i)
						ref[k] = i
					}
					if g := sized.Stats().Grows; g != 0 {
						t.Errorf("%d Sets into a store sized for them: %d growths, want 0", hint, g)
					}
					if grown.Stats().Grows == 0 && hint > 1000 {
						t.Errorf("%d Sets into a store without a hint: no growth (the test checks nothing)", hint)
					}
					// Only a stash past its bound grows a table early,
					// and then the two part ways.
					if a, b := grown.Report().Buckets, sized.Report().Buckets; a != b && grown.Stats().Grows == uint64(growthsTo(&o, uint64(a))) {
						t.Errorf("after %d Sets: %d buckets grown from empty, %d with the hint", hint, a, b)
					}
					for _, s := range []kv[uint64, int]{grown, sized} {
						if s.Len() != len(ref) {
							t.Fatalf("Len %d, want %d", s.Len(), len(ref))
						}
						for k, v := range ref {
							if got, ok := s.Get(k); !ok || got != v {
								t.Fatalf("Get(%#x) = %d, %v; want %d", k, got, ok, v)
							}
						}
					}
					// Past the table's threshold, the store grows.
					maxE, _ := thresholds(cfgOf(sized), tableFor(cfgOf(sized), uint64(hint)))
					for i := hint; i <= int(maxE); i++ {
						sized.Set(uint64(i)*0x9e3779b97f4a7c15+1, i)
					}
					if sized.Stats().Grows == 0 {
						t.Errorf("%d Sets into a store sized for %d: no growth", maxE+1, hint)
					}
					// Clear goes back to the hinted table.
					sized.Clear()
					if got, want := sized.Report().Buckets, int(tableFor(cfgOf(sized), uint64(hint))); got != want {
						t.Errorf("after Clear: %d buckets, want %d", got, want)
					}
				})
			}
		}
	}
}

// growthsTo counts the steps of the growth path from an empty table to a
// table of n buckets (-1 if n is not on it).
func growthsTo(o *Options, n uint64) int {
	m := tableFor(o, 0)
	for steps := 0; ; steps++ {
		if m == n {
			return steps
		}
		next := nextSize(o, m)
		if next == m || m > n {
			return -1
		}
		m = next
	}
}

var (
	printThresholds = flag.Bool("store.print-thresholds", false, "print the threshold tables of grow.go as Go source")
	longTests       = flag.Bool("store.long", false, "run the long versions of the store's tests")
)

// fluidThreshold is the rule of maxUtilization, computed: the largest u in
// steps of 0.05 (at most 0.95) whose fluid-limit overflow is at most
// overflowTarget.
func fluidThreshold(t testing.TB, rule bucket.Placement, d, c int) float64 {
	best := 0.05
	for k := 1; k <= 19; k++ {
		u := float64(k) / 20
		of, err := fluid.OverflowAt(rule, d, c, u)
		if err != nil {
			t.Fatal(err)
		}
		if of > overflowTarget {
			break
		}
		best = u
	}
	return best
}

// TestThresholdsFollowFluidLimit recomputes the threshold tables of
// grow.go from the fluid limit: they must agree entry for entry. With
// -store.print-thresholds it prints them, to paste into grow.go.
func TestThresholdsFollowFluidLimit(t *testing.T) {
	// The whole table takes half a minute to recompute: the normal suite
	// checks the default configuration and one choice, -store.long or
	// -store.print-thresholds all of it.
	ds, cs := []int{1, 2}, []int{8}
	if *longTests || *printThresholds {
		ds, cs = []int{1, 2, 3, 4, 5, 6, 7, 8}, []int{1, 2, 3, 4, 5, 6, 7, 8}
	}
	for _, rule := range []bucket.Placement{bucket.DChoice, bucket.GoLeft} {
		var src strings.Builder
		for _, d := range ds {
			fmt.Fprintf(&src, "\t\t{")
			for _, c := range cs {
				r := rule
				if d == 1 {
					r = bucket.OneChoice
				}
				want := fluidThreshold(t, r, d, c)
				if got := maxUtilization(rule, d, c); got != want {
					t.Errorf("%s d=%d C=%d: table says %.2f, fluid limit gives %.2f", rule, d, c, got, want)
				}
				sep := ", "
				if c == cs[len(cs)-1] {
					sep = ""
				}
				fmt.Fprintf(&src, "%.2f%s", want, sep)
			}
			fmt.Fprintf(&src, "},\n")
		}
		if *printThresholds {
			t.Logf("%s:\n%s", rule, src.String())
		}
	}
	// The rules without a table of their own share d-choice's limit.
	for _, rule := range []bucket.Placement{bucket.Halves, bucket.DoubleHash} {
		if maxUtilization(rule, 2, 8) != maxUtilization(bucket.DChoice, 2, 8) {
			t.Errorf("%s does not use d-choice's thresholds", rule)
		}
	}
}

func TestStashHintsAndGrowthByStash(t *testing.T) {
	// One choice, one slot: the stash fills fast and forces growth.
	s := newTestMap[int, int](t, MapOptions{Choices: 1, BucketSize: 1, Seed: 11})
	deleted := map[int]bool{}
	for i := range 3000 {
		s.Set(i, -i)
		if i%97 == 0 {
			s.Delete(i / 2)
			deleted[i/2] = true
		}
	}
	st := s.Stats()
	if st.Grows == 0 {
		t.Fatalf("no growth: %+v", st)
	}
	for i := range 3000 {
		v, ok := s.Get(i)
		if ok == deleted[i] || (ok && v != -i) {
			t.Fatalf("Get(%d) = %d, %v (deleted %v)", i, v, ok, deleted[i])
		}
	}
}

// TestGrowthUsesPreparedTable: the next table is allocated a chunk per
// write only near the threshold, and the growth takes that table.
func TestGrowthUsesPreparedTable(t *testing.T) {
	s := newTestMap[int, int](t, MapOptions{Seed: 4})
	i := 0
	for s.tabs.Load().cur.n < 3*chunkSize { // big enough for several chunks
		s.Set(i, i)
		i++
	}
	for s.tabs.Load().old != nil {
		s.Set(i, i)
		i++
	}
	cur := s.tabs.Load().cur
	if s.prep != nil {
		t.Fatalf("next table prepared right after a growth, at %d of %d entries", cur.entries.Load(), cur.maxEntries)
	}
	var prepared *table[int, int]
	for s.tabs.Load().cur == cur {
		s.Set(i, i)
		i++
		if s.prep != nil {
			prepared = s.prep
			if s.prep.ready == 0 {
				t.Fatal("prepared table without a chunk")
			}
		}
	}
	if prepared == nil || s.tabs.Load().cur != prepared || prepared.ready != len(prepared.hdrs) {
		t.Fatalf("growth did not take the prepared table (prepared %v)", prepared != nil)
	}
}

// After an All loop kept the table from growing, the table grows at the
// first Set of a new key, not at the first write: an update or a Delete
// leaves the stash that the loop's inserts filled (All's doc said the
// first write grew the table).
func TestGrowthAfterAllWaitsForANewKey(t *testing.T) {
	s := newTestMap[int, int](t, MapOptions{Seed: 8})
	s.Set(-1, -1)
	for range s.All() {
		for i := range 1000 {
			s.Set(i, i)
		}
	}
	before := s.Stats()
	if before.Stash == 0 || before.Grows != 0 {
		t.Fatalf("after the loop: %+v", before)
	}
	s.Set(1, 1)
	s.Delete(2)
	if st := s.Stats(); st.Grows != before.Grows {
		t.Fatalf("an update or a Delete grew the table: %+v", st)
	}
	s.Set(1000, 1000)
	if st := s.Stats(); st.Grows != before.Grows+1 {
		t.Fatalf("the Set of a new key did not grow the table: %+v", st)
	}
}
