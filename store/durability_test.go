package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

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
