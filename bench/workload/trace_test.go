package workload

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// OpenTrace tells ARC from LIRS by the first line with a request, through
// compression, blank lines and LIRS's "*" markers.
func TestOpenTrace(t *testing.T) {
	cases := []struct {
		name, text string
		want       []uint64
		format     string
	}{
		{"a.lis", "5 3 0 0\n9 1 0 1\n", []uint64{5, 6, 7, 9}, "arc:"},
		{"b.lis", "\n\r\n  7\t2 x\n", []uint64{7, 8}, "arc:"},
		{"c.trc", "*\n\n 12 \n*\n4\n", []uint64{12, 4}, "lirs:"},
		{"d.trc", "3", []uint64{3}, "lirs:"},
	}
	for _, c := range cases {
		for _, packed := range []bool{false, true} {
			b := []byte(c.text)
			if packed {
				b = compress(t, b)
			}
			f, err := OpenTrace(writeFile(t, c.name, b))
			if err != nil {
				t.Fatalf("%s (compressed %v): %v", c.name, packed, err)
			}
			got, err := readAll(t, f, 2)
			f.Close()
			if err != nil || !equal(keysOf(got), c.want) {
				t.Errorf("%s (compressed %v): %v, %v; want %v", c.name, packed, keysOf(got), err, c.want)
			}
			if want := c.format + c.name; f.Name() != want {
				t.Errorf("name %q, want %q", f.Name(), want)
			}
		}
	}
}

func TestOpenTraceErrors(t *testing.T) {
	if _, err := OpenTrace(filepath.Join(t.TempDir(), "none.lis")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	for _, text := range []string{"", "\n\n*\n  \n"} {
		if _, err := OpenTrace(writeFile(t, "e.lis", []byte(text))); !errors.Is(err, ErrEmpty) {
			t.Errorf("%q: %v; want ErrEmpty", text, err)
		}
	}
	long := strings.Repeat("\n", sniffSize+10) + "1 1 0 0\n"
	if _, err := OpenTrace(writeFile(t, "l.lis", []byte(long))); !errors.Is(err, ErrSyntax) {
		t.Errorf("no request in the look-ahead: %v; want ErrSyntax", err)
	}
	if _, err := OpenTrace(writeFile(t, "z.lis", compress(t, []byte("1 1 0 0\n"))[:10])); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated zstd: %v; want ErrCorrupt", err)
	}
}
