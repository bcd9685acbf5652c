package workload

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

func TestARC(t *testing.T) {
	in := "10 3 0 0\n\n7 1 0 1\r\n18446744073709551614 2 x y\n5\t2\t0\t2"
	got, err := readAll(t, NewARC("t.lis", strings.NewReader(in)), 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{10, 11, 12, 7, 1<<64 - 2, 1<<64 - 1, 5, 6}
	if k := keysOf(got); !equal(k, want) {
		t.Fatalf("keys %v; want %v", k, want)
	}
	for _, r := range got {
		if r.Op != Read {
			t.Fatalf("trace request %+v is not a read", r)
		}
	}
}

// Every malformed line is reported with its sentinel and its line number,
// after the requests of the lines before it.
func TestARCErrors(t *testing.T) {
	for _, c := range []struct {
		in     string
		before int // requests read before the error
		line   int
		err    error
	}{
		{"1 1 0 0\nx 1 0 0\n", 1, 2, ErrSyntax},
		{"1 1 0 0\n2\n", 1, 2, ErrSyntax},
		{"1 -1 0 0\n", 0, 1, ErrSyntax},
		{"1 2\n1 0 0 0\n", 2, 2, ErrRange},
		{"18446744073709551615 2 0 0\n", 0, 1, ErrRange},
		{"18446744073709551616 1 0 0\n", 0, 1, ErrRange},
		{"1 1\n\n\n1e3 1\n", 1, 4, ErrSyntax},
		{"1 1\n" + strings.Repeat("9", MaxLine+1) + "\n", 1, 2, ErrSyntax},
	} {
		got, err := readAll(t, NewARC("t.lis", strings.NewReader(c.in)), 3)
		var le *LineError
		if !errors.Is(err, c.err) || !errors.As(err, &le) || le.Line != c.line || le.Name != "t.lis" || len(got) != c.before {
			t.Errorf("%.40q: %d requests, error %v; want %d requests, %v on line %d", c.in, len(got), err, c.before, c.err, c.line)
		}
	}
}

// A line whose count passes MaxARCRequests is refused as it is read,
// before it is expanded: otherwise the 20 bytes "0 1000000000000 0 0"
// would take the benchmark harness, which collects a trace's requests up
// to its bound of 2^27 (2^27+1 to tell a trace past it), to 4.37 GB before
// it could refuse them. So is a line that takes the trace's total past the bound, after
// the requests of the lines before it.
func TestARCCountBound(t *testing.T) {
	const line = "0 1000000000000 0 0\n"
	// Streamed, the line is an error at the first Read, with no request.
	w := NewARC("big.lis", strings.NewReader(line))
	buf := make([]Request[uint64], BatchSize)
	read := 0
	var err error
	for read <= MaxARCRequests && err == nil {
		var n int
		n, err = w.Read(buf)
		read += n
	}
	var le *LineError
	if read != 0 || !errors.Is(err, ErrRange) || !errors.As(err, &le) || le.Line != 1 {
		t.Fatalf("%q: %d requests, then %v; want an ErrRange error on line 1 before any request", line, read, err)
	}
	// Collected as the harness collects a trace, it costs Collect's first
	// block (2^20 requests, 16 MiB) and the reader's buffers, not the
	// line's requests.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	reqs, err := Collect(NewARC("big.lis", strings.NewReader(line)), MaxARCRequests+1)
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 20<<20 {
		t.Errorf("collecting %q allocated %d MiB; want at most 20", line, alloc>>20)
	}
	if len(reqs) != 0 || !errors.Is(err, ErrRange) || !strings.Contains(err.Error(), "1000000000000") {
		t.Errorf("Collect of %q: %d requests, %v; want none and an ErrRange error that gives the count", line, len(reqs), err)
	}

	// A total past the bound: the requests before the line that passes
	// it, then the error on that line.
	in := fmt.Sprintf("0 %d 0 0\n\n7 2 0 1\n", MaxARCRequests-1)
	w = NewARC("sum.lis", strings.NewReader(in))
	read, err = 0, nil
	for err == nil {
		var n int
		n, err = w.Read(buf)
		read += n
	}
	if read != MaxARCRequests-1 || !errors.Is(err, ErrRange) || !errors.As(err, &le) || le.Line != 3 {
		t.Errorf("%q: %d requests, then %v; want %d and an ErrRange error on line 3", in, read, err, MaxARCRequests-1)
	}
	// Up to the bound, a trace is read whole.
	in = fmt.Sprintf("0 %d 0 0\n7 1 0 1\n", MaxARCRequests-1)
	w = NewARC("full.lis", strings.NewReader(in))
	read, err = 0, nil
	for err == nil {
		var n int
		n, err = w.Read(buf)
		read += n
	}
	if read != MaxARCRequests || err != io.EOF {
		t.Errorf("%q: %d requests, then %v; want %d and io.EOF", in, read, err, MaxARCRequests)
	}
}

func TestLIRS(t *testing.T) {
	in := "5\n 6 \n\n*\n5\r\n18446744073709551615"
	got, err := readAll(t, NewLIRS("t.trc", strings.NewReader(in)), 2)
	if err != nil {
		t.Fatal(err)
	}
	if k := keysOf(got); !equal(k, []uint64{5, 6, 5, 1<<64 - 1}) {
		t.Fatalf("keys %v", k)
	}
	for _, c := range []struct {
		in   string
		line int
		err  error
	}{{"1\n2 3\n", 2, ErrSyntax}, {"-4\n", 1, ErrSyntax}, {"1\n2\n**\n", 3, ErrSyntax}, {"18446744073709551616\n", 1, ErrRange}} {
		_, err := readAll(t, NewLIRS("t.trc", strings.NewReader(c.in)), 2)
		var le *LineError
		if !errors.Is(err, c.err) || !errors.As(err, &le) || le.Line != c.line {
			t.Errorf("%q: error %v; want %v on line %d", c.in, err, c.err, c.line)
		}
	}
}

func TestKeys(t *testing.T) {
	in := "alpha\nbeta gamma\r\n\n  spaced  \ndelta\t7\tx\r\n\tno key\nalpha"
	got, err := readAll(t, NewKeys("k.txt", strings.NewReader(in)), 3)
	if err != nil {
		t.Fatal(err)
	}
	if k := keysOf(got); !equal(k, []string{"alpha", "beta gamma", "  spaced  ", "delta", "alpha"}) {
		t.Fatalf("keys %q", k)
	}
	_, err = readAll(t, NewKeys("k.bin", strings.NewReader("ok\nbad\x00key\n")), 3)
	var le *LineError
	if !errors.Is(err, ErrSyntax) || !errors.As(err, &le) || le.Line != 2 {
		t.Fatalf("NUL byte: error %v", err)
	}
}

func TestWeighted(t *testing.T) {
	w, err := NewWeighted("w.tsv", strings.NewReader("left-pad\t100\nwith\ttab\t 50 \r\n\nzero\t0\n"), 7)
	if err != nil {
		t.Fatal(err)
	}
	if k := w.Keys(); !equal(k, []string{"left-pad", "with\ttab", "zero"}) {
		t.Fatalf("keys %q", k)
	}
	counts := map[string]int{}
	for range 30_000 {
		counts[w.Next()]++
	}
	if counts["zero"] != 0 || counts["left-pad"] < 19_000 || counts["left-pad"] > 21_000 {
		t.Fatalf("draws %v; want about 2:1 and no zero-weight key", counts)
	}
	if w.Name() != "weighted:w.tsv(keys=3,seed=7)" {
		t.Errorf("Name = %q", w.Name())
	}
	// Reseeding shares the table but not the stream.
	a, b := w.Reseed(1), w.Reseed(1)
	for range 100 {
		if a.Next() != b.Next() {
			t.Fatal("same seed, different draws")
		}
	}

	for _, c := range []struct {
		in   string
		line int
		err  error
	}{
		{"a\t1\nb 2\n", 2, ErrSyntax},
		{"a\t1\nb\t-2\n", 2, ErrWeight},
		{"a\t1\nb\tNaN\n", 2, ErrWeight},
		{"a\t1\nb\tInf\n", 2, ErrWeight},
		{"a\t1\nb\t\n", 2, ErrWeight},
		{"a\t1\nb\t2\na\t3\n", 3, ErrDuplicate},
		{"a\x00\t1\n", 1, ErrSyntax},
	} {
		_, err := NewWeighted("w.tsv", strings.NewReader(c.in), 1)
		var le *LineError
		if !errors.Is(err, c.err) || !errors.As(err, &le) || le.Line != c.line {
			t.Errorf("%q: error %v; want %v on line %d", c.in, err, c.err, c.line)
		}
	}
	for _, c := range []struct {
		in  string
		err error
	}{{"", ErrEmpty}, {"\n\n", ErrEmpty}, {"a\t0\nb\t0\n", ErrWeight}, {"a\t1e308\nb\t1e308\n", ErrWeight}} {
		if _, err := NewWeighted("w.tsv", strings.NewReader(c.in), 1); !errors.Is(err, c.err) {
			t.Errorf("%q: error %v; want %v", c.in, err, c.err)
		}
	}
}

// A LineError says where, what and why, and keeps long lines short.
func TestLineErrorMessage(t *testing.T) {
	_, err := readAll(t, NewARC("OLTP.lis", strings.NewReader("1 1\n"+strings.Repeat("z", 100)+"\n")), 4)
	msg := err.Error()
	if !strings.HasPrefix(msg, "OLTP.lis:2: workload: malformed line") || len(msg) > 160 || !strings.Contains(msg, "…") {
		t.Fatalf("message %q", msg)
	}
}

// Keys of weight 0 are listed but never drawn: Drawable counts the others.
func TestWeightedDrawable(t *testing.T) {
	w, err := NewWeighted("w", strings.NewReader("a\t1\nb\t0\nc\t0\nd\t2.5\n"), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Keys()) != 4 || w.Drawable() != 2 || w.Reseed(2).Drawable() != 2 {
		t.Errorf("keys %d, drawable %d; want 4 and 2", len(w.Keys()), w.Drawable())
	}
}

// MaxLine bytes are accepted whatever the line ending; one more is not.
func TestMaxLineExact(t *testing.T) {
	long := strings.Repeat("k", MaxLine)
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{long + "\n", true},
		{long + "\r\n", true},
		{long, true},
		{long + "k\n", false},
		{long + "k\r\n", false},
		{long + "k", false},
	} {
		got, err := Collect(NewKeys("k", strings.NewReader(tc.in)), 10)
		if tc.ok && (err != nil || len(got) != 1 || len(got[0].Key) != MaxLine) {
			t.Errorf("a line of %d bytes (+%q): %d keys, %v", MaxLine, tc.in[MaxLine:], len(got), err)
		}
		if !tc.ok && !errors.Is(err, ErrSyntax) {
			t.Errorf("a line of %d bytes: %v, want ErrSyntax", MaxLine+1, err)
		}
	}
}
