package workload

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// keyFileCase is a key file that exercises every rule of keys.go, and the
// keys it holds.
func keyFileCase() (file []byte, keys []string) {
	long := strings.Repeat("L", 200<<10) // past bufio.Scanner's default 64 KiB
	longest := strings.Repeat("M", MaxLine-2)
	var b bytes.Buffer
	b.WriteString("alpha\r\n")                     // CRLF
	b.WriteString("\n\r\n")                        // blank lines, LF and CRLF
	b.WriteString("beta gamma\t17\tx\n")           // a TSV: the first column
	b.WriteString("\tno key\n")                    // empty first column: skipped
	b.WriteString("  spaced  \n")                  // spaces belong to the key
	b.WriteString("bad\xff\xfeutf8\n")             // any bytes but NUL
	b.WriteString(long + "\n")                     // a long line
	b.WriteString(longest + "\t1\n")               // MaxLine bytes in all
	b.WriteString("alpha\n")                       // a repeat is a key again
	b.WriteString("last line without a newline\r") // and its CR dropped
	return b.Bytes(), []string{"alpha", "beta gamma", "  spaced  ", "bad\xff\xfeutf8", long, longest, "alpha", "last line without a newline"}
}

// Every way of reading a key file gives the same keys: the harness's
// stream (NewKeys, OpenKeys), ScanKeys on a reader, and ScanKeyFile and
// ReadKeyFile on a file, plain or compressed.
func TestKeyFileReadersAgree(t *testing.T) {
	file, want := keyFileCase()
	plain := writeFile(t, "keys.tsv", file)
	packed := writeFile(t, "keys.tsv.zst", compress(t, file))

	check := func(how string, got []string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %d keys %.60q, want %d %.60q", how, len(got), got, len(want), want)
		}
	}
	reqs, err := readAll(t, NewKeys("k", bytes.NewReader(file)), 3)
	check("NewKeys", keysOf(reqs), err)
	for _, p := range []string{plain, packed} {
		f, err := OpenKeys(p)
		if err != nil {
			t.Fatal(err)
		}
		reqs, err := readAll(t, f, 5)
		f.Close()
		check("OpenKeys "+filepath.Base(p), keysOf(reqs), err)

		var got []string
		var lines []int
		var fracs []float64
		err = ScanKeyFile(p, func(f float64) { fracs = append(fracs, f) }, func(line int, key []byte) error {
			got, lines = append(got, string(key)), append(lines, line)
			return nil
		})
		check("ScanKeyFile "+filepath.Base(p), got, err)
		if wantLines := []int{1, 4, 6, 7, 8, 9, 10, 11}; !slices.Equal(lines, wantLines) {
			t.Errorf("ScanKeyFile %s: lines %v, want %v", filepath.Base(p), lines, wantLines)
		}
		if len(fracs) == 0 || fracs[len(fracs)-1] != 1 {
			t.Errorf("ScanKeyFile %s: progress %v, want it to end at 1", filepath.Base(p), fracs)
		}

		got, err = ReadKeyFile(p, nil)
		check("ReadKeyFile "+filepath.Base(p), got, err)

		raw, err := os.ReadFile(p) // compressed or not: ScanKeys decompresses
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		err = ScanKeys("stdin", bytes.NewReader(raw), func(_ int, key []byte) error {
			got = append(got, string(key))
			return nil
		})
		check("ScanKeys "+filepath.Base(p), got, err)
	}
}

// The errors of the key-file reader name the input and the line, and wrap
// the package's sentinels; fn's own error stops the scan and comes back.
func TestKeyFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		err  error
		line int
	}{
		{"binary", []byte("ok\nab\x00cd\nef\n"), ErrSyntax, 2},
		{"nul-after-tab", []byte("ok\nab\t\x00\n"), ErrSyntax, 2},
		{"long", []byte("ok\n\n" + strings.Repeat("x", MaxLine+1) + "\n"), ErrSyntax, 3},
		{"empty", []byte("\n\t1\n\r\n"), ErrEmpty, 0},
		{"badzst", append(compress(t, bytes.Repeat([]byte("key\n"), 5000))[:40:40], 0xff, 0xff), ErrCorrupt, 0},
	} {
		p := writeFile(t, "keys."+tc.name, tc.data)
		_, err := ReadKeyFile(p, nil)
		var le *LineError
		switch {
		case !errors.Is(err, tc.err) || !strings.Contains(err.Error(), p):
			t.Errorf("%s: %v, want %v naming %s", tc.name, err, tc.err, p)
		case tc.line > 0 && (!errors.As(err, &le) || le.Line != tc.line):
			t.Errorf("%s: %v, want a line error on line %d", tc.name, err, tc.line)
		}
	}
	if _, err := ReadKeyFile(filepath.Join(t.TempDir(), "absent"), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	stop := errors.New("stop")
	n := 0
	err := ScanKeys("in", strings.NewReader("a\nb\nc\n"), func(int, []byte) error {
		if n++; n == 2 {
			return stop
		}
		return nil
	})
	if err != stop || n != 2 {
		t.Errorf("fn's error: %v after %d keys, want stop after 2", err, n)
	}
}
