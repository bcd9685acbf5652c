package workload

import (
	"errors"
	"flag"
	"io"
	"testing"
)

// seed drives every random choice of the package's tests; a failure
// replays with -seed.
var seed = flag.Uint64("seed", 1, "seed for the randomised tests of package workload")

func testSeed(t testing.TB) uint64 {
	t.Helper()
	t.Logf("seed %d (replay with -seed %d)", *seed, *seed)
	return *seed
}

// readAll reads w to the end, in batches of the given size, and returns
// what it read and the error that ended it (nil for io.EOF).
func readAll[K comparable](t testing.TB, w Workload[K], batch int) ([]Request[K], error) {
	t.Helper()
	var out []Request[K]
	buf := make([]Request[K], batch)
	for {
		n, err := w.Read(buf)
		if n > 0 && err != nil {
			t.Fatalf("Read returned n = %d and err = %v; want one or the other", n, err)
		}
		if n == 0 && err == nil {
			t.Fatalf("Read returned 0 requests and no error")
		}
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			// The error must stick.
			if n2, err2 := w.Read(buf); n2 != 0 || !errors.Is(err2, err) {
				t.Fatalf("Read after error %v returned %d, %v", err, n2, err2)
			}
			return out, err
		}
	}
}

func keysOf[K comparable](reqs []Request[K]) []K {
	keys := make([]K, len(reqs))
	for i, r := range reqs {
		keys[i] = r.Key
	}
	return keys
}

func TestLimitAndCollect(t *testing.T) {
	s, _ := NewScan(10)
	w := Limit[uint64](s, 25)
	got, err := readAll(t, w, 7)
	if err != nil || len(got) != 25 {
		t.Fatalf("Limit(scan, 25): %d requests, %v", len(got), err)
	}
	for i, r := range got {
		if r.Key != uint64(i%10) || r.Op != Read {
			t.Fatalf("request %d = %+v", i, r)
		}
	}
	if w.Name() != "scan(n=10),requests=25" {
		t.Errorf("Name = %q", w.Name())
	}

	s, _ = NewScan(10)
	c, err := Collect[uint64](s, 3000)
	if err != nil || len(c) != 3000 || c[2999].Key != 9 {
		t.Fatalf("Collect(scan, 3000) = %d requests, %v", len(c), err)
	}
	c, err = Collect(Replay("r", Reads([]uint64{4, 5, 6})), 10)
	if err != nil || len(c) != 3 || c[2].Key != 6 {
		t.Fatalf("Collect stops at the end of a finite workload: %v, %v", c, err)
	}
	for _, max := range []int{0, -1} {
		if c, err := Collect[uint64](s, max); len(c) != 0 || err != nil {
			t.Fatalf("Collect(%d) = %v, %v", max, c, err)
		}
	}
}

func TestReplay(t *testing.T) {
	reqs := []Request[string]{{"a", Read}, {"b", Write}, {"c", Read}}
	got, err := readAll(t, Replay("r", reqs), 2)
	if err != nil || len(got) != 3 || got[1] != reqs[1] {
		t.Fatalf("Replay = %v, %v", got, err)
	}
	if n, err := Replay("r", reqs).Read(nil); n != 0 || err != nil {
		t.Fatalf("Read(nil) = %d, %v; want 0, nil", n, err)
	}
}

func TestReplayReads(t *testing.T) {
	keys := []uint64{5, 6, 7, 5, 9}
	for _, batch := range []int{1, 2, 1024} {
		w := ReplayReads("k", keys)
		got, err := readAll(t, w, batch)
		if err != nil || w.Name() != "k" {
			t.Fatal(err)
		}
		if want := Reads(keys); len(got) != len(want) || got[0] != want[0] || got[4] != want[4] || got[3].Op != Read {
			t.Errorf("batch %d: %v, want %v", batch, got, want)
		}
	}
	if n, err := ReplayReads("k", keys).Read(nil); n != 0 || err != nil {
		t.Fatalf("Read(nil) = %d, %v; want 0, nil", n, err)
	}
	if keys[0] != 5 {
		t.Fatal("the keys changed")
	}
}

func TestOpString(t *testing.T) {
	if Read.String() != "read" || Write.String() != "write" || Op(7).String() != "Op(7)" {
		t.Fatal(Read.String(), Write.String(), Op(7).String())
	}
}
