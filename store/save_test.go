package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twochoice/twochoice/bucket"
)

// A cache's Save abandoned mid-walk (its context canceled) while writers
// write the buckets they copy to the file themselves (assist) leaves the
// file to no one once it returns. A cache's writers hold bucket locks,
// not the store's mutex, so ending the view must wait for any writer
// inside an assist: aborting the file (rolling back bbolt's transaction
// and unmapping it) while a writer still appends to it is a data race
// that -race reports here and that could fault on the unmapped pages.
// The walker's other errors (a value that does not encode) take the same
// path.
func TestSaveAbandonedWhileWritersAssist(t *testing.T) {
	defer func(b int) { pendingBound = b }(pendingBound)
	pendingBound = 0 // writers write every bucket they copy
	const keys = 40_000
	dir := t.TempDir()
	s := newTestCache(t, CacheOptions[string, int]{Seed: 57, MaxEntries: 2 * keys})
	for i := range keys {
		s.Set(fmt.Sprint(i), i)
	}
	rounds := 10
	if testing.Short() {
		rounds = 2
	}
	for range rounds {
		var stop atomic.Bool
		var wg sync.WaitGroup
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := g; !stop.Load(); i += 7 {
					s.Set(fmt.Sprint(i%keys), i)
				}
			}()
		}
		ctx, cancel := context.WithCancel(context.Background())
		err := s.SaveContext(ctx, filepath.Join(dir, "s.snap"), func(done, total uint64) {
			if done > 0 {
				cancel()
			}
		})
		stop.Store(true)
		wg.Wait()
		if err == nil {
			t.Fatal("the walk ended before the cancel: make the cache larger")
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	r, _ := saveOpen(t, s, nil)
	sameContents(t, s, r)
}

// A progress callback that panics, in a caller that recovers (an HTTP
// server does), leaves the store as it was before the Save: the view
// ends, the table grows again, and the next Save works. A view left
// installed would keep the table pinned, so the store would never grow
// again (every new key going to the stash) and writers would go on
// copying buckets for a snapshot no one is taking.
func TestSaveProgressPanics(t *testing.T) {
	dir := t.TempDir()
	s := newTestMap[string, int](t, MapOptions{Seed: 53})
	for i := range 20_000 {
		s.Set(fmt.Sprint(i), i)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the callback's panic did not reach the caller")
			}
		}()
		s.SaveProgress(filepath.Join(dir, "p.snap"), func(done, total uint64) {
			if done > 0 {
				panic("progress bar")
			}
		})
	}()
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if v := s.view.Load(); v != nil {
		t.Fatal("the panicked Save's view is still installed")
	}
	n := s.Report().Buckets
	// Ten times the keys, or three in the short suite: several growths,
	// or at least one.
	more := 200_000
	if testing.Short() {
		more = 60_000
	}
	for i := range more {
		s.Set(fmt.Sprint("more", i), i)
	}
	if r := s.Report(); r.Buckets == n || r.Stash > 1000 {
		t.Fatalf("the table did not grow after the panicked Save: %d buckets, %d keys in the stash", r.Buckets, r.Stash)
	}
	r, _ := saveOpen(t, s, nil)
	sameContents(t, s, r)
}

// childEnv, when set to a path, turns the test binary into the child of
// TestSaveSurvivesKill: it saves to that path in a loop until killed.
const childEnv = "TWOCHOICE_SAVE_CHILD"

const childKeys = 20_000

// saveLoop is the child: it goes on from the snapshot at path if there is
// one; generation g sets every key k<i> to g, adds the key gen-<g> (so the
// entry count, and with it the table, changes from one snapshot to the
// next), and saves.
func saveLoop(path string) {
	s, err := Open[string, []byte](path, nil)
	g := uint64(1)
	switch {
	case err == nil:
		g = uint64(s.Len()-childKeys) + 1
	case errors.Is(err, ErrNotFound):
		s, err = New[string, []byte](Options{Seed: 31})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(3)
	}
	val := make([]byte, 100)
	for ; ; g++ {
		binary.LittleEndian.PutUint64(val, g)
		for i := range childKeys {
			s.Set(fmt.Sprint("k", i), val)
		}
		s.Set(fmt.Sprint("gen-", g), nil)
		if err := s.Save(path); err != nil {
			fmt.Fprintln(os.Stderr, "save:", err)
			os.Exit(3)
		}
	}
}

// checkGeneration checks that a snapshot of saveLoop is one whole
// generation: every key holds the same g, and gen-1 … gen-g are there.
func checkGeneration(s kv[string, []byte]) (uint64, error) {
	if s.Len() < childKeys+1 {
		return 0, fmt.Errorf("%d entries", s.Len())
	}
	g := uint64(s.Len() - childKeys)
	for i := range childKeys {
		v, ok := s.Get(fmt.Sprint("k", i))
		if !ok || len(v) != 100 || binary.LittleEndian.Uint64(v) != g {
			return 0, fmt.Errorf("k%d = %v, %v; generation %d", i, v, ok, g)
		}
	}
	for x := uint64(1); x <= g; x++ {
		if _, ok := s.Get(fmt.Sprint("gen-", x)); !ok {
			return 0, fmt.Errorf("gen-%d missing in generation %d", x, g)
		}
	}
	return g, s.checkInvariants()
}

// A child process saves in a loop; the test kills it (SIGKILL) at random
// moments, many times, and opens the file each time: it must hold one
// whole generation. Run with -store.long for 100 kills.
func TestSaveSurvivesKill(t *testing.T) {
	if p := os.Getenv(childEnv); p != "" {
		saveLoop(p)
		return
	}
	if testing.Short() && !*longTests {
		t.Skip("the kill test runs in the full suite")
	}
	kills := 5
	if *longTests {
		kills = 100
	}
	seed := seedFor(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	path := filepath.Join(t.TempDir(), "s.snap")
	var last uint64
	gens := map[uint64]bool{}
	for x := range kills {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestSaveSurvivesKill$")
		cmd.Env = append(os.Environ(), childEnv+"="+path)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if x == 0 { // wait for the first snapshot
			for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
				if _, err := os.Stat(path); err == nil {
					break
				}
				if time.Since(start) > 30*time.Second {
					cmd.Process.Kill()
					t.Fatal("no snapshot after 30 s")
				}
			}
		}
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		if err := cmd.Process.Kill(); err != nil { // SIGKILL on Unix
			t.Fatal(err)
		}
		if err := cmd.Wait(); err == nil {
			t.Fatal("the child exited by itself")
		} else if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == 3 {
			t.Fatalf("the child failed to open or save: %v", err)
		}
		s, err := Open[string, []byte](path, nil)
		if err != nil {
			t.Fatalf("kill %d: the surviving file does not open: %v", x, err)
		}
		g, err := checkGeneration(s)
		if err != nil {
			t.Fatalf("kill %d: %v", x, err)
		}
		if g < last {
			t.Fatalf("kill %d: generation %d after %d", x, g, last)
		}
		last = g
		gens[g] = true
	}
	// Each save removes what killed saves left; only the last kill's may
	// remain.
	left, _ := filepath.Glob(path + ".tmp-*")
	if len(left) > 1 {
		t.Errorf("%d temporary files left by killed saves", len(left))
	}
	t.Logf("%d kills, %d generations seen, the last %d", kills, len(gens), last)
}

// A snapshot taken while writers insert, update and delete is the store
// at one instant. Each writer inserts its keys w<id>-<seq> in order of
// seq, then sets w<id>-last to seq; a deleter deletes d-<i> in order of
// i. At any instant, each writer's keys present are a prefix 0…p-1 with
// last = p-1 or p-2, and the d- keys present are a suffix. A walk that
// did not copy buckets before they change sees keys inserted after it
// passed some buckets but not others: gaps.
func TestSaveIsPointInTime(t *testing.T) {
	const writers, pre = 2, 4000
	// Each writer inserts up to perWriter keys: while a snapshot runs
	// the table does not grow and new keys pile up in the stash.
	perWriter, saves := 40_000, 8
	if testing.Short() {
		perWriter, saves = 5_000, 3
	}
	// The last is a cache, whose writers lock buckets instead of the
	// store's mutex; large enough that it evicts nothing (checked), since
	// an eviction would leave a gap the check below cannot tell from a
	// torn snapshot.
	for x, o := range []Options{{Seed: 21}, {Placement: bucket.DChoice, Choices: 3, BucketSize: 4, Seed: 22}, {Choices: 1, BucketSize: 2, Seed: 23}, {Seed: 24}, {MaxEntries: 1 << 20, Seed: 25}} {
		t.Run(name(o), func(t *testing.T) {
			if x == 3 {
				// Writers write every bucket they copy to the file.
				defer func(b int) { pendingBound = b }(pendingBound)
				pendingBound = 0
			}
			s := newTestStore[string, int](t, o)
			for i := range pre {
				s.Set(fmt.Sprint("d-", i), i)
			}
			var stop atomic.Bool
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for seq := 0; seq < perWriter && !stop.Load(); seq++ {
						s.Set(fmt.Sprintf("w%d-%d", w, seq), seq)
						s.Set(fmt.Sprintf("w%d-last", w), seq)
					}
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < pre && !stop.Load(); i++ {
					s.Delete(fmt.Sprint("d-", i))
				}
			}()
			wg.Add(1)
			go func() { // readers are not in the way either
				defer wg.Done()
				for i := 0; i < writers*perWriter && !stop.Load(); i++ {
					s.Get(fmt.Sprint("d-", i%pre))
				}
			}()
			dir := t.TempDir()
			var files []string
			for x := range saves {
				p := filepath.Join(dir, fmt.Sprint(x, ".snap"))
				if err := s.Save(p); err != nil {
					t.Error(err)
					break
				}
				files = append(files, p)
			}
			stop.Store(true)
			wg.Wait()
			if ev := s.Stats().Evictions; ev != 0 {
				t.Fatalf("the cache evicted %d entries: make it larger", ev)
			}
			for _, p := range files {
				r, err := Open[string, int](p, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := r.checkInvariants(); err != nil {
					t.Fatal(err)
				}
				checkInstant(t, r, writers, pre)
			}
		})
	}
}

func checkInstant(t *testing.T, r kv[string, int], writers, pre int) {
	t.Helper()
	for w := range writers {
		p := 0
		for {
			if _, ok := r.Get(fmt.Sprintf("w%d-%d", w, p)); !ok {
				break
			}
			p++
		}
		n := 0
		for k := range r.Keys() {
			if strings.HasPrefix(k, fmt.Sprintf("w%d-", w)) && !strings.HasSuffix(k, "last") {
				n++
			}
		}
		if n != p {
			t.Fatalf("writer %d: keys 0…%d present, then gaps: %d keys in all", w, p-1, n)
		}
		last, ok := r.Get(fmt.Sprintf("w%d-last", w))
		// Set(w-p) happened, then Set(last, p) may or may not have.
		valid := ok && last == p-1 || ok && last == p-2 || !ok && p <= 1
		if !valid {
			t.Fatalf("writer %d: keys 0…%d present, last = %d, %v", w, p-1, last, ok)
		}
	}
	first := pre
	for i := pre - 1; i >= 0; i-- {
		if _, ok := r.Get(fmt.Sprint("d-", i)); !ok {
			break
		}
		first = i
	}
	for i := range first {
		if _, ok := r.Get(fmt.Sprint("d-", i)); ok {
			t.Fatalf("d-%d present, d-%d…%d present, but some between deleted", i, first, pre-1)
		}
	}
}

// A Save that cannot write its file says why with ErrWrite (and the
// system's error), names the file once, and leaves what was there.
func TestSaveErrors(t *testing.T) {
	s, err := NewMap[string, int](MapOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.Set("a", 1)
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "x"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		also error
	}{
		{filepath.Join(dir, "missing", "s.snap"), fs.ErrNotExist}, // no such directory
		{sub, nil}, // a directory in the file's place
		{"", nil},
	} {
		err := s.Save(tc.path)
		if !errors.Is(err, ErrWrite) || tc.also != nil && !errors.Is(err, tc.also) {
			t.Errorf("Save(%q) = %v; want ErrWrite", tc.path, err)
			continue
		}
		if tc.path != "" && strings.Count(err.Error(), "snapshot "+tc.path+":") != 1 {
			t.Errorf("Save(%q): %v: want the file named once", tc.path, err)
		}
		t.Logf("Save(%q): %v", tc.path, err)
	}
	if b, err := os.ReadFile(filepath.Join(sub, "x")); err != nil || string(b) != "keep" {
		t.Errorf("the directory's file: %q, %v", b, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

type complexField struct {
	N int
	C complex128
}

// A value msgpack cannot write is ErrValueType, and loses nothing: a
// value type it would drop whole (complex numbers, functions, channels:
// Save wrote records without them, Open gave zero values, and inspect
// misread the records as corrupt) is refused before the file is touched,
// and a value it fails to encode (a slice of complex numbers, an any
// holding one) stops the save with the previous snapshot in place.
func TestSaveValueTypes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.snap")
	good := newTestMap[string, int](t, MapOptions{Seed: 3})
	good.Set("kept", 1)
	if err := good.Save(path); err != nil {
		t.Fatal(err)
	}
	c := newTestMap[string, complex128](t, MapOptions{Seed: 3})
	c.Set("a", 1+2i)
	f := newTestMap[string, func()](t, MapOptions{Seed: 3})
	f.Set("a", func() {})
	ch := newTestMap[string, chan int](t, MapOptions{Seed: 3})
	ch.Set("a", make(chan int))
	cs := newTestStore[string, []complex64](t, Options{Seed: 3})
	cs.Set("a", []complex64{1i})
	a := newTestMap[string, any](t, MapOptions{Seed: 3})
	for i := range 100 {
		a.Set(fmt.Sprint(i), i)
	}
	a.Set("c", 3i)
	for name, save := range map[string]func(string) error{
		"complex128": c.Save, "func": f.Save, "chan": ch.Save, "[]complex64": cs.Save, "any holding a complex128": a.Save,
	} {
		err := save(path)
		if !errors.Is(err, ErrValueType) || strings.Count(err.Error(), path) != 1 {
			t.Errorf("%s: %v; want ErrValueType naming the file once", name, err)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
			t.Errorf("%s: temporary files left: %v", name, left)
		}
		r, err := Open[string, int](path, nil)
		if err != nil {
			t.Fatalf("%s: the previous snapshot: %v", name, err)
		}
		if v, ok := r.Get("kept"); !ok || v != 1 {
			t.Fatalf("%s: the previous snapshot holds kept = %v, %v", name, v, ok)
		}
	}
	// A struct's complex fields, like its function and channel fields,
	// are left out, as Save's doc says; the rest of it round-trips.
	sf := newTestMap[string, complexField](t, MapOptions{Seed: 3})
	sf.Set("a", complexField{7, 1i})
	r, _ := saveOpen(t, sf, nil)
	if v, ok := r.Get("a"); !ok || v.N != 7 {
		t.Errorf("struct with a complex field: %+v, %v", v, ok)
	}
}

// SaveContext gives up when its context is done, mid-walk and with
// writers at work: the error names the file and wraps the context's, no
// temporary file is left, the previous snapshot stands, and the store
// (unharmed) saves again afterwards. A context done before the call
// touches nothing.
func TestSaveContextCanceled(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.snap")
	s := newTestMap[string, int](t, MapOptions{Seed: 51})
	s.Set("first", 1)
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	// Enough keys for a walk of 16,384 buckets or more, four times the
	// stretch between two checks of ctx (ctxCheckBuckets): the walk must
	// stop within half of it.
	keys := 200_000
	if testing.Short() {
		keys = 100_000
	}
	for i := range keys {
		s.Set(fmt.Sprint(i), i)
	}
	stopWriters := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stopWriters:
					return
				default:
				}
				s.Set(fmt.Sprint(i%keys), g)
			}
		}()
	}
	ctx, cancel := context.WithCancel(context.Background())
	var last, all uint64
	err := s.SaveContext(ctx, path, func(done, total uint64) {
		last, all = done, total
		if done > 0 {
			cancel() // once the walk is under way
		}
	})
	if all < 4*ctxCheckBuckets {
		t.Fatalf("a walk of %d buckets is too short to tell a stop after the cancel", all)
	}
	if last >= all/2 {
		t.Errorf("the walk went on to bucket %d of %d after the cancel", last, all)
	}
	close(stopWriters)
	wg.Wait()
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), path) {
		t.Fatalf("SaveContext canceled mid-walk: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	if r, err := Open[string, int](path, nil); err != nil || r.Len() != 1 {
		t.Fatalf("the previous snapshot: %v", err)
	}
	if err := s.checkInvariants(); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveContext(ctx, path, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("SaveContext with a done context: %v", err)
	}
	r, _ := saveOpen(t, s, nil)
	sameContents(t, s, r)
}
