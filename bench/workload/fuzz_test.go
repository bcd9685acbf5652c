package workload

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The fuzz tests check each parser against a reference written the
// obvious way with the strings and strconv packages: same requests, and an
// error exactly when the reference finds one, on the same line. Neither may
// panic.

// splitLines splits like the readers do: on "\n", dropping one trailing
// "\r" per line and the empty piece after a final newline.
func splitLines(in string) []string {
	ls := strings.Split(in, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	for i, l := range ls {
		ls[i] = strings.TrimSuffix(l, "\r")
	}
	return ls
}

func isDecimal(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// refUint is strconv.ParseUint restricted to plain digits (no sign, no
// underscores).
func refUint(s string) (uint64, bool) {
	if !isDecimal(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

func fields(l string) []string {
	return strings.FieldsFunc(l, func(r rune) bool { return r == ' ' || r == '\t' })
}

// refARC returns the keys and the line of the first error (0 for none).
func refARC(in string) ([]uint64, int) {
	var keys []uint64
	var total uint64
	for i, l := range splitLines(in) {
		if len(l) > MaxLine {
			return keys, i + 1
		}
		f := fields(l)
		if len(f) == 0 {
			continue
		}
		if len(f) < 2 {
			return keys, i + 1
		}
		start, ok1 := refUint(f[0])
		count, ok2 := refUint(f[1])
		if !ok1 || !ok2 || count == 0 || count-1 > math.MaxUint64-start || count > MaxARCRequests-total {
			return keys, i + 1
		}
		total += count
		for j := range min(count, 1<<12) { // the fuzzer's counts stay small; see below
			keys = append(keys, start+j)
		}
		if count > 1<<12 {
			return nil, -1 // too long to expand; skip this input
		}
	}
	return keys, 0
}

func checkAgainst[K comparable](t *testing.T, in string, got []Request[K], err error, want []K, wantLine int) {
	t.Helper()
	var le *LineError
	switch {
	case wantLine == 0 && err != nil:
		t.Fatalf("%q: error %v; reference finds none", in, err)
	case wantLine > 0 && (!errors.As(err, &le) || le.Line != wantLine):
		t.Fatalf("%q: error %v; reference finds one on line %d", in, err, wantLine)
	case wantLine > 0 && !(errors.Is(err, ErrSyntax) || errors.Is(err, ErrRange)):
		t.Fatalf("%q: error %v wraps no sentinel", in, err)
	}
	if k := keysOf(got); !equal(k, want) {
		t.Fatalf("%q: keys %v; reference %v", in, k, want)
	}
}

func FuzzARC(f *testing.F) {
	for _, s := range []string{"1 1 0 0\n2 1 0 1\n", "1936993 8 0 0\n793041 16 0 1", "\n\n5 3", "1 0", "x", "18446744073709551615 1 0 0\r\n", "1\t2\tz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		want, line := refARC(in)
		if line < 0 {
			t.Skip()
		}
		got, err := readAll(t, NewARC("f", strings.NewReader(in)), 5)
		checkAgainst(t, in, got, err, want, line)
	})
}

func FuzzLIRS(f *testing.F) {
	for _, s := range []string{"1\n2\n*\n3\n", " 4 \r\n\n", "*", "**", "-1", "1 2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		want, line := refLIRS(in)
		got, err := readAll(t, NewLIRS("f", strings.NewReader(in)), 3)
		checkAgainst(t, in, got, err, want, line)
	})
}

// refLIRS returns the keys and the line of the first error (0 for none).
func refLIRS(in string) ([]uint64, int) {
	var keys []uint64
	for i, l := range splitLines(in) {
		b := strings.Trim(l, " \t")
		if b == "" || b == "*" {
			continue
		}
		k, ok := refUint(b)
		if !ok {
			return keys, i + 1
		}
		keys = append(keys, k)
	}
	return keys, 0
}

// FuzzTrace opens the input as a trace file, as OpenTrace tells ARC from
// LIRS by the first line that is not blank or "*" (two or more fields: ARC),
// and reads it: the format, the requests and the error must be the
// reference's for that format.
func FuzzTrace(f *testing.F) {
	for _, s := range []string{"1 1 0 0\n2 1 0 1\n", "\n*\n 5 \n6\n", "*\n\n", "", "\r\r\n1 2", "1\t2", " 7\r\n8 9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) >= sniffSize {
			t.Skip("past the look-ahead: TestOpenTraceErrors")
		}
		arc, empty := false, true
		for _, l := range splitLines(in) {
			if b := strings.Trim(l, " \t"); b != "" && b != "*" {
				arc, empty = len(fields(b)) >= 2, false
				break
			}
		}
		p := filepath.Join(t.TempDir(), "t.trace")
		if err := os.WriteFile(p, []byte(in), 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := OpenTrace(p)
		if empty {
			if !errors.Is(err, ErrEmpty) {
				t.Fatalf("%q: %v; want ErrEmpty", in, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		defer tr.Close()
		if isARC := strings.HasPrefix(tr.Name(), "arc:"); isARC != arc {
			t.Fatalf("%q: read as %s; the reference says ARC %v", in, tr.Name(), arc)
		}
		want, line := refLIRS(in)
		if arc {
			if want, line = refARC(in); line < 0 {
				t.Skip()
			}
		}
		got, err := readAll(t, tr, 4)
		checkAgainst(t, in, got, err, want, line)
	})
}

func FuzzKeys(f *testing.F) {
	for _, s := range []string{"a\nb\n\nc", "x\r\ny", "\x00", "a b\tc\r\n", "\tk\nv\t\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var want []string
		var wantLines []int
		line := 0
		for i, l := range splitLines(in) {
			if strings.IndexByte(l, 0) >= 0 {
				line = i + 1
				break
			}
			if key, _, _ := strings.Cut(l, "\t"); key != "" {
				want = append(want, key)
				wantLines = append(wantLines, i+1)
			}
		}
		got, err := readAll(t, NewKeys("f", strings.NewReader(in)), 3)
		checkAgainst(t, in, got, err, want, line)
		// ScanKeys, which the commands read key files with, reads the
		// same keys, on the same lines (of text: it decompresses
		// Zstandard).
		if strings.HasPrefix(in, string(zstdMagic)) {
			return
		}
		var scanned []Request[string]
		var lines []int
		err = ScanKeys("f", strings.NewReader(in), func(line int, key []byte) error {
			scanned = append(scanned, Request[string]{Key: string(key)})
			lines = append(lines, line)
			return nil
		})
		checkAgainst(t, in, scanned, err, want, line)
		if !equal(lines, wantLines) {
			t.Fatalf("%q: ScanKeys gave the keys on lines %v; reference %v", in, lines, wantLines)
		}
	})
}

func FuzzWeighted(f *testing.F) {
	for _, s := range []string{"a\t1\nb\t2\n", "a\t0\n", "a b\t 3 \r\n", "a\t1\na\t1", "\t5", "a\t-1", "a\t1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var keys []string
		seen := map[string]bool{}
		var sum float64
		bad := false
		for _, l := range splitLines(in) {
			if l == "" {
				continue
			}
			tab := strings.LastIndexByte(l, '\t')
			if tab < 0 || strings.IndexByte(l[:tab], 0) >= 0 || seen[l[:tab]] {
				bad = true
				break
			}
			w, err := strconv.ParseFloat(strings.Trim(l[tab+1:], " \t"), 64)
			if err != nil || w < 0 || math.IsInf(w, 0) || math.IsNaN(w) {
				bad = true
				break
			}
			seen[l[:tab]] = true
			keys = append(keys, l[:tab])
			sum += w
		}
		bad = bad || len(keys) == 0 || !(sum > 0) || math.IsInf(sum, 0)
		w, err := NewWeighted("f", strings.NewReader(in), 1)
		if bad != (err != nil) {
			t.Fatalf("%q: error %v; reference bad = %v", in, err, bad)
		}
		if err != nil {
			return
		}
		if !equal(w.Keys(), keys) {
			t.Fatalf("%q: keys %q; reference %q", in, w.Keys(), keys)
		}
		for range 100 {
			if k := w.Next(); !seen[k] {
				t.Fatalf("drew %q, not a key", k)
			}
		}
	})
}
