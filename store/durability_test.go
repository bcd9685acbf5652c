package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/twochoice/twochoice/internal/testfs"
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
func checkGeneration(s *Store[string, []byte]) (uint64, error) {
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
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
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

// A full disk fails Save with ErrNoSpace, leaves no temporary file, and
// leaves the previous snapshot whole. It needs a small file system, which
// root can mount.
func TestSaveDiskFull(t *testing.T) {
	dir := testfs.SmallTmpfs(t, "2m")
	path := filepath.Join(dir, "s.snap")
	s := newTestStore[string, []byte](t, Options{Seed: 41})
	for i := range 100 {
		s.Set(fmt.Sprint(i), []byte("small"))
	}
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 1000)
	for i := range 5000 {
		s.Set(fmt.Sprint("big", i), big)
	}
	err := s.Save(path)
	if !errors.Is(err, ErrNoSpace) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("saving 5 MB into 2 MB: %v", err)
	}
	r, err := Open[string, []byte](path, nil)
	if err != nil || r.Len() != 100 {
		t.Fatalf("the previous snapshot: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	// The store is unharmed and saves once there is room.
	for i := range 5000 {
		s.Delete(fmt.Sprint("big", i))
	}
	if err := s.Save(path); err != nil {
		t.Fatalf("saving after the disk full: %v", err)
	}
}

// A disk that fills at any point of a Save (the file created, records
// committed, the metadata, the sync) fails it with ErrNoSpace, leaves no
// temporary file and the previous snapshot whole: the free space is
// stepped from none to enough, a ballast file taking the rest.
func TestSaveDiskFullAtEveryPoint(t *testing.T) {
	dir := testfs.SmallTmpfs(t, "8m")
	path := filepath.Join(dir, "s.snap")
	s := newTestStore[string, []byte](t, Options{Seed: 43})
	for i := range 100 {
		s.Set(fmt.Sprint(i), []byte("small"))
	}
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	val := make([]byte, 200)
	for i := range 5000 {
		s.Set(fmt.Sprint("big", i), val)
	}
	step := int64(32 << 10) // one bbolt page is 4 KiB: -store.long tries each
	switch {
	case *longTests:
		step = 4 << 10
	case testing.Short():
		step = 128 << 10
	}
	ballast := filepath.Join(dir, "ballast")
	failed := 0
	for leave := int64(0); ; leave += step {
		os.Remove(ballast)
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil {
			t.Fatal(err)
		}
		free := int64(st.Bavail) * st.Bsize
		if err := os.WriteFile(ballast, make([]byte, max(free-leave, 0)), 0o644); err != nil {
			t.Fatal(err)
		}
		err := s.Save(path)
		if err != nil && !errors.Is(err, ErrNoSpace) {
			t.Fatalf("%d bytes free: %v", leave, err)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
			t.Fatalf("%d bytes free: temporary files left: %v", leave, left)
		}
		r, oerr := Open[string, []byte](path, nil)
		if oerr != nil {
			t.Fatalf("%d bytes free: the snapshot: %v", leave, oerr)
		}
		if err == nil {
			if r.Len() != s.Len() {
				t.Fatalf("saved %d entries of %d", r.Len(), s.Len())
			}
			break
		}
		if r.Len() != 100 {
			t.Fatalf("%d bytes free: the previous snapshot holds %d entries", leave, r.Len())
		}
		failed++
	}
	t.Logf("%d saves failed with the disk full before one fitted", failed)
}
