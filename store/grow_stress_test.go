package store

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/testutil"
)

// The growth stress test: writers, readers, iterators and snapshots on an
// unbounded store that starts empty and grows many times, checking every
// guarantee the documentation states against what each goroutine knows to
// be true.
//
// Each writer owns its keys ("w<w>-<i>") and a share of the stable keys
// ("s<j>", set before the run, updated but never deleted). Every write of
// a writer carries the writer's next sequence number in its value, so the
// values of one key only grow, and a snapshot can be matched against the
// writer's log. A writer works on a window of its keys; a key that leaves
// the window is retired: never written again, its final state published
// for readers to check exactly.

// stressVal is a value of the stress test: the key it belongs to and the
// sequence number of the write. big makes the slot too large to read
// optimistically, so that the locked read path is tested too.
type stressVal struct {
	K   string
	Seq uint64
	Pad [32]uint64
}

type stressCodec[V any] struct {
	mk    func(k string, seq uint64) V
	parse func(v V) (string, uint64)
}

var (
	stringCodec = stressCodec[string]{
		mk: func(k string, seq uint64) string { return k + "|" + strconv.FormatUint(seq, 10) },
		parse: func(v string) (string, uint64) {
			i := strings.LastIndexByte(v, '|')
			if i < 0 {
				return "", 0
			}
			n, _ := strconv.ParseUint(v[i+1:], 10, 64)
			return v[:i], n
		},
	}
	bigCodec = stressCodec[stressVal]{
		mk:    func(k string, seq uint64) stressVal { return stressVal{K: k, Seq: seq, Pad: [32]uint64{31: seq}} },
		parse: func(v stressVal) (string, uint64) { return v.K, v.Seq },
	}
)

type stressOp struct {
	key string
	seq uint64
	del bool
}

type stressWriter struct {
	id      int
	log     []stressOp // written by the writer only; read at quiescent points
	started atomic.Uint64
	done    atomic.Uint64
	retired atomic.Int64      // keys w<id>-0 … retired-1 are final
	final   []atomic.Uint64   // final seq of a retired key (0: absent)
	state   map[string]uint64 // current seq of every key it wrote (0: absent)
	lo, hi  int               // the window: keys lo … hi-1
	stable  []string          // its share of the stable keys
}

type stressCfg struct {
	o             Options
	writers       int
	readers       int
	ops           int // per writer per phase
	phases        int
	window        int
	stable        int
	iterate, save bool
	longPin       bool
}

func stressKey(w, i int) string { return "w" + strconv.Itoa(w) + "-" + strconv.Itoa(i) }

func runStress[V any](t *testing.T, cfg stressCfg, codec stressCodec[V]) {
	s := newTestStore[string, V](t, cfg.o)
	rng := rand.New(rand.NewPCG(cfg.o.Seed, 1))
	var (
		failures atomic.Int64
		fail     = func(format string, args ...any) {
			if failures.Add(1) <= 10 {
				t.Errorf(format, args...)
			}
		}
	)
	ws := make([]*stressWriter, cfg.writers)
	maxKeys := cfg.ops*cfg.phases + cfg.window + 1
	for w := range ws {
		ws[w] = &stressWriter{id: w, final: make([]atomic.Uint64, maxKeys), state: map[string]uint64{}}
	}
	stableKeys := make([]string, cfg.stable)
	for j := range stableKeys {
		k := "s" + strconv.Itoa(j)
		stableKeys[j] = k
		w := ws[j%cfg.writers]
		w.stable = append(w.stable, k)
		w.started.Add(1)
		seq := w.started.Load()
		s.Set(k, codec.mk(k, seq))
		w.log = append(w.log, stressOp{key: k, seq: seq})
		w.state[k] = seq
		w.done.Store(seq)
	}
	isStable := func(k string) bool { return strings.HasPrefix(k, "s") }
	writerOf := func(k string) (*stressWriter, int, bool) {
		if !strings.HasPrefix(k, "w") {
			return nil, 0, false
		}
		a, b, ok := strings.Cut(k[1:], "-")
		if !ok {
			return nil, 0, false
		}
		w, err1 := strconv.Atoi(a)
		i, err2 := strconv.Atoi(b)
		if err1 != nil || err2 != nil || w >= len(ws) || i >= maxKeys {
			return nil, 0, false
		}
		return ws[w], i, true
	}

	type saved struct {
		path   string
		lo, hi []uint64
	}
	var savesMu sync.Mutex
	var saves []saved
	dir := t.TempDir()

	for phase := range cfg.phases {
		var (
			wg      sync.WaitGroup
			writing sync.WaitGroup
			stop    atomic.Bool
		)
		for _, w := range ws {
			writing.Add(1)
			wseed := rng.Uint64()
			go func() {
				defer writing.Done()
				r := rand.New(rand.NewPCG(wseed, uint64(w.id)))
				write := func(k string, del bool) {
					seq := w.started.Add(1)
					w.log = append(w.log, stressOp{key: k, seq: seq, del: del})
					if del {
						was := w.state[k] != 0
						if got := s.Delete(k); got != was {
							fail("writer %d: Delete(%s) = %v, the key was there: %v", w.id, k, got, was)
						}
						w.state[k] = 0
					} else {
						s.Set(k, codec.mk(k, seq))
						w.state[k] = seq
					}
					w.done.Store(seq)
					// Read your writes.
					v, ok := s.Get(k)
					if del && ok {
						fail("writer %d: Get(%s) after Delete = %v", w.id, k, v)
					}
					if !del {
						if gk, gs := codec.parse(v); !ok || gk != k || gs != seq {
							fail("writer %d: Get(%s) after Set seq %d = %s seq %d, %v", w.id, k, seq, gk, gs, ok)
						}
					}
				}
				for range cfg.ops {
					switch x := r.IntN(100); {
					case x < 55 || w.hi == w.lo:
						// A new key: the store grows.
						write(stressKey(w.id, w.hi), false)
						w.hi++
					case x < 75:
						write(stressKey(w.id, w.lo+r.IntN(w.hi-w.lo)), true)
					case x < 90:
						write(stressKey(w.id, w.lo+r.IntN(w.hi-w.lo)), false)
					default:
						if len(w.stable) > 0 {
							write(w.stable[r.IntN(len(w.stable))], false)
						}
					}
					for w.hi-w.lo > cfg.window {
						w.final[w.lo].Store(w.state[stressKey(w.id, w.lo)])
						w.lo++
						w.retired.Store(int64(w.lo))
					}
				}
			}()
		}
		// Readers.
		for r := range cfg.readers {
			wg.Add(1)
			rseed := rng.Uint64()
			go func() {
				defer wg.Done()
				rr := rand.New(rand.NewPCG(rseed, uint64(r)))
				last := map[string]uint64{}
				check := func(k string, v V, ok bool) {
					if !ok {
						return
					}
					gk, gs := codec.parse(v)
					if gk != k {
						fail("reader: Get(%s) = a value of %s", k, gk)
					}
					if gs < last[k] {
						fail("reader: Get(%s) went back from seq %d to %d", k, last[k], gs)
					}
					last[k] = gs
				}
				for !stop.Load() {
					if len(stableKeys) > 0 {
						k := stableKeys[rr.IntN(len(stableKeys))]
						v, ok := s.Get(k)
						if !ok {
							fail("reader: stable key %s missed", k)
						}
						check(k, v, ok)
					}
					w := ws[rr.IntN(len(ws))]
					if n := int(w.retired.Load()); n > 0 {
						i := rr.IntN(n)
						k := stressKey(w.id, i)
						want := w.final[i].Load()
						v, ok := s.Get(k)
						if _, gs := codec.parse(v); ok != (want != 0) || (ok && gs != want) {
							fail("reader: retired key %s: Get = seq %d, %v; want seq %d", k, gs, ok, want)
						}
						check(k, v, ok)
					}
					// A key of the window, in flux.
					k := stressKey(w.id, rr.IntN(maxKeys))
					v, ok := s.Get(k)
					check(k, v, ok)
				}
			}()
		}
		// The observer: All, Stats, Load, Len.
		if cfg.iterate {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					retired := make([]int, len(ws))
					for i, w := range ws {
						retired[i] = int(w.retired.Load())
					}
					seen := map[string]int{}
					for k, v := range s.All() {
						gk, _ := codec.parse(v)
						if gk != k {
							fail("All: %s → a value of %s", k, gk)
						}
						seen[k]++
						if w, i, ok := writerOf(k); ok && i < retired[w.id] {
							if w.final[i].Load() == 0 {
								fail("All: yielded %s, deleted for good before the loop", k)
							}
						} else if !ok && !isStable(k) {
							fail("All: unknown key %s", k)
						}
					}
					for _, k := range stableKeys {
						if seen[k] != 1 {
							fail("All: stable key %s yielded %d times", k, seen[k])
						}
					}
					for i, w := range ws {
						for x := range retired[i] {
							k := stressKey(w.id, x)
							want := 0
							if w.final[x].Load() != 0 {
								want = 1
							}
							if seen[k] != want {
								fail("All: retired key %s yielded %d times, want %d", k, seen[k], want)
							}
						}
					}
					st := s.Stats()
					if st.Gets != st.Hits+st.Misses {
						fail("Stats: gets %d, hits %d + misses %d", st.Gets, st.Hits, st.Misses)
					}
					if n := s.Len(); n < len(stableKeys) {
						fail("Len %d below the %d stable keys", n, len(stableKeys))
					}
					if rep := s.Report(); rep.Entries < len(stableKeys) {
						fail("Load: %d entries, below the %d stable keys", rep.Entries, len(stableKeys))
					}
				}
			}()
		}
		if cfg.longPin {
			// Hold an iteration half-way while the writers insert, so
			// that the stash takes what the table cannot.
			wg.Add(1)
			go func() {
				defer wg.Done()
				next, stopIter := iter.Pull2(s.All())
				defer stopIter()
				seen := map[string]int{}
				for range 3 {
					if k, _, ok := next(); ok {
						seen[k]++
					}
				}
				for !stop.Load() {
					time.Sleep(time.Millisecond)
				}
				for {
					k, _, ok := next()
					if !ok {
						break
					}
					seen[k]++
				}
				for _, k := range stableKeys {
					if seen[k] != 1 {
						fail("held All: stable key %s yielded %d times", k, seen[k])
					}
				}
			}()
		}
		if cfg.save {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for x := 0; !stop.Load() && x < 10; x++ {
					sv := saved{path: filepath.Join(dir, fmt.Sprintf("p%d-%d.snap", phase, x))}
					for _, w := range ws {
						sv.lo = append(sv.lo, w.done.Load())
					}
					if err := s.SaveContext(context.Background(), sv.path, nil); err != nil {
						fail("Save: %v", err)
						return
					}
					for _, w := range ws {
						sv.hi = append(sv.hi, w.started.Load())
					}
					savesMu.Lock()
					saves = append(saves, sv)
					savesMu.Unlock()
				}
			}()
		}
		writing.Wait()
		stop.Store(true)
		wg.Wait()
		if failures.Load() > 0 {
			return
		}
		// A quiescent point, perhaps in the middle of a growth.
		if err := s.checkInvariants(); err != nil {
			t.Fatalf("phase %d: %v", phase, err)
		}
		want := 0
		for _, w := range ws {
			for k, seq := range w.state {
				if seq == 0 {
					continue
				}
				want++
				v, ok := s.Get(k)
				if gk, gs := codec.parse(v); !ok || gk != k || gs != seq {
					t.Fatalf("phase %d: Get(%s) = %s seq %d, %v; want seq %d", phase, k, gk, gs, ok, seq)
				}
			}
		}
		if got := s.Len(); got != want {
			t.Fatalf("phase %d: Len %d, want %d", phase, got, want)
		}
		n := 0
		for range s.All() {
			n++
		}
		if n != want {
			t.Fatalf("phase %d: All yields %d entries, want %d", phase, n, want)
		}
		for _, sv := range saves {
			checkStressSnapshot(t, sv.path, sv.lo, sv.hi, ws, codec)
		}
		saves = saves[:0]
		if t.Failed() {
			return
		}
	}
	st := s.Stats()
	t.Logf("%d entries, %d grows, %d buckets, stash %d", st.Entries, st.Grows, st.Buckets, st.Stash)
}

// checkStressSnapshot checks that a snapshot is the store at one instant:
// for every writer, its keys as they were after some prefix of its log,
// one that ends between what it had finished when Save began and what it
// had started when Save returned.
func checkStressSnapshot[V any](t *testing.T, path string, lo, hi []uint64, ws []*stressWriter, codec stressCodec[V]) {
	t.Helper()
	r, err := Open[string, V](path, nil)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	if err := r.checkInvariants(); err != nil {
		t.Fatalf("restored %s: %v", path, err)
	}
	snap := make([]map[string]uint64, len(ws))
	for i := range snap {
		snap[i] = map[string]uint64{}
	}
	n := 0
	for k, v := range r.All() {
		n++
		gk, seq := codec.parse(v)
		if gk != k {
			t.Fatalf("snapshot %s: %s → a value of %s", path, k, gk)
		}
		// The writer of a stable key is known from its share; find it by
		// the log instead: the seq is unique per writer, not across them.
		found := false
		for i, w := range ws {
			if strings.HasPrefix(k, "w"+strconv.Itoa(w.id)+"-") || (strings.HasPrefix(k, "s") && slicesContains(w.stable, k)) {
				snap[i][k] = seq
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("snapshot %s: unknown key %s", path, k)
		}
	}
	if r.Len() != n {
		t.Fatalf("snapshot %s: Len %d, All yields %d", path, r.Len(), n)
	}
	for i, w := range ws {
		state := map[string]uint64{}
		mismatch := len(snap[i])
		ok := lo[i] == 0 && mismatch == 0
		for _, op := range w.log {
			if op.seq > hi[i] || ok {
				break
			}
			before := state[op.key] == snap[i][op.key]
			if op.del {
				state[op.key] = 0
			} else {
				state[op.key] = op.seq
			}
			after := state[op.key] == snap[i][op.key]
			switch {
			case before && !after:
				mismatch++
			case !before && after:
				mismatch--
			}
			if op.seq >= lo[i] && mismatch == 0 {
				ok = true
			}
		}
		if !ok {
			t.Fatalf("snapshot %s: writer %d's keys match no instant between its ops %d and %d", path, w.id, lo[i], hi[i])
		}
	}
}

func slicesContains(s []string, k string) bool {
	for _, x := range s {
		if x == k {
			return true
		}
	}
	return false
}

// TestGrowthStress runs the stress test over every rule and family, d = 1
// to 4 and buckets of 1 to 8 slots, from an empty store, with short runs
// (1,500 operations a writer and phase under -store.long, 800 otherwise);
// and a few configurations longer, with snapshots and a held iteration.
// The short suite under the race detector runs half the configurations,
// the odd or the even ones as the seed says, so that two runs cover them
// all.
func TestGrowthStress(t *testing.T) {
	ops, phases := 800, 3
	half := false
	switch {
	case *longTests:
		ops = 1500
	case testing.Short():
		ops, phases = 400, 2
		if testutil.Race {
			ops, half = 150, true // 160 of the 320 configurations
		}
	}
	seed := seedFor(t)
	x := uint64(0)
	for _, rule := range bucket.Placements() {
		for _, kind := range hashfn.Kinds() {
			for d := 1; d <= 4; d++ {
				if rule == bucket.OneChoice && d != 1 {
					continue
				}
				for c := 1; c <= 8; c++ {
					x++
					if half && (x+seed)%2 == 0 {
						continue
					}
					o := Options{Placement: rule, Choices: d, BucketSize: c, Hash: kind, Seed: seed + x}
					cfg := stressCfg{o: o, writers: 2, readers: 1, ops: ops, phases: phases, window: 200, stable: 50, iterate: c%2 == 0, save: c%4 == 1}
					t.Run(name(o), func(t *testing.T) { runStress(t, cfg, stringCodec) })
				}
			}
		}
	}
}

// TestGrowthStressLong runs a few configurations longer: with snapshots,
// a held iteration (the stash takes the new keys meanwhile), and the
// locked read path. The plain suite runs 6,000 operations a writer and
// phase, a minute and a half less than the 20,000 of -store.long, to keep
// CI within its budget on a 2-core machine; a soak before a release runs
// -store.long (and the fuzzers, see fuzz_test.go).
func TestGrowthStressLong(t *testing.T) {
	ops, phases := 6000, 4
	switch {
	case *longTests:
		ops = 20000
	case testing.Short():
		ops, phases = 3000, 2
		if testutil.Race {
			ops = 1000
		}
	}
	seed := seedFor(t)
	for i, o := range []Options{
		{Placement: bucket.GoLeft, Choices: 2, BucketSize: 8},
		{Placement: bucket.DChoice, Choices: 2, BucketSize: 1},
		{Placement: bucket.OneChoice, Choices: 1, BucketSize: 2},
		{Placement: bucket.DoubleHash, Choices: 3, BucketSize: 4, Hash: hashfn.Tabulation},
		{Placement: bucket.Halves, Choices: 4, BucketSize: 3},
	} {
		o.Seed = seed + uint64(i)
		for _, pin := range []bool{false, true} {
			cfg := stressCfg{o: o, writers: 2, readers: 2, ops: ops, phases: phases, window: 2000, stable: 200, iterate: true, save: true, longPin: pin}
			t.Run(fmt.Sprintf("%s/pin=%v", name(o), pin), func(t *testing.T) { runStress(t, cfg, stringCodec) })
		}
		cfg := stressCfg{o: o, writers: 2, readers: 1, ops: ops / 4, phases: phases, window: 500, stable: 50, iterate: true, save: true}
		t.Run(name(o)+"/locked", func(t *testing.T) { runStress(t, cfg, bigCodec) })
	}
}
