package workload

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/twochoice/twochoice/internal/testutil"
)

func compress(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	e, err := zstd.NewWriter(&out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A trace must read the same compressed or not, whatever the file is called.
func TestOpenDecompressesByMagic(t *testing.T) {
	var text strings.Builder
	for i := range 20000 {
		text.WriteString(strings.Repeat("1", 1+i%5) + " 3 0 0\n")
	}
	plain := writeFile(t, "t.lis", []byte(text.String()))
	packed := writeFile(t, "misnamed.lis", compress(t, []byte(text.String())))
	var got [2][]Request[uint64]
	for i, p := range []string{plain, packed} {
		f, err := OpenARC(p)
		if err != nil {
			t.Fatal(err)
		}
		got[i], err = readAll(t, f, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(got[0]) != 60000 || !equal(got[0], got[1]) {
		t.Fatalf("plain: %d requests, compressed: %d, equal: %v", len(got[0]), len(got[1]), equal(got[0], got[1]))
	}
}

// A truncated or corrupt compressed trace is an error, not a short trace.
func TestOpenCorruptZstd(t *testing.T) {
	var text strings.Builder
	for i := range 50000 {
		text.WriteString(strings.Repeat("7", 1+i%9) + " 1 0 0\n")
	}
	z := compress(t, []byte(text.String()))
	flipped := append([]byte(nil), z...)
	flipped[len(flipped)/2] ^= 0xff
	for name, b := range map[string][]byte{
		"truncated": z[:len(z)*2/3],
		"corrupt":   flipped,
		"header":    z[:6],
	} {
		f, err := OpenARC(writeFile(t, name+".lis.zst", b))
		if err == nil {
			_, err = readAll(t, f, 1000)
			f.Close()
		}
		// Zstandard may only find a corrupt block by the frame's checksum,
		// after the block's garbage has been read as (malformed) lines.
		if !errors.Is(err, ErrCorrupt) && !(name == "corrupt" && errors.Is(err, ErrSyntax)) {
			t.Errorf("%s: error %v; want ErrCorrupt", name, err)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := OpenKeys(filepath.Join(t.TempDir(), "absent")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	// An empty file is an empty trace, not an error.
	f, err := OpenLIRS(writeFile(t, "empty", nil))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.Read(make([]Request[uint64], 4)); n != 0 || err != io.EOF {
		t.Fatalf("empty trace: %d, %v", n, err)
	}
	f.Close()
	// A compressed weighted key file, and the name the workload reports.
	w, err := ReadWeighted(writeFile(t, "pkgs.tsv.zst", compress(t, []byte("a\t1\nb\t3\n"))), 9)
	if err != nil {
		t.Fatal(err)
	}
	if w.Name() != "weighted:pkgs.tsv.zst(keys=2,seed=9)" {
		t.Fatalf("Name = %q", w.Name())
	}
	if _, err := ReadWeighted(writeFile(t, "bad.tsv", []byte("a 1\n")), 9); !errors.Is(err, ErrSyntax) {
		t.Fatalf("bad weighted file: %v", err)
	}
	k, err := OpenKeys(writeFile(t, "keys.txt", []byte("x\ny\n")))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if k.Name() != "keys:keys.txt" {
		t.Fatalf("Name = %q", k.Name())
	}
}

// failingReader returns its data, then err.
type failingReader struct {
	data string
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.data == "" {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// When reading fails in the middle of a line, the piece of the line is not
// a request: the whole lines come first, then the read error.
func TestReadErrorMidLine(t *testing.T) {
	boom := errors.New("boom")
	got, err := readAll(t, NewARC("t", &failingReader{"1 1 0 0\n2 1 0 0\n33", boom}), 8)
	var le *LineError
	if !errors.Is(err, boom) || errors.As(err, &le) || len(got) != 2 {
		t.Fatalf("%d requests, error %v; want 2 and the read error", len(got), err)
	}
}

// A file named .zst or .zstd that is not Zstandard is ErrCorrupt, for key
// files and traces alike (it was read as text), and a directory is EISDIR;
// each error names the file once. A Zstandard file needs no such name.
func TestOpenNamesAndDirectories(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"keys.zst", "keys.ZSTD", "trace.lis.zst"} {
		p := writeFile(t, name, []byte("1 1 0 0\n"))
		_, err := Open(p)
		err2 := ScanKeyFile(p, nil, func(int, []byte) error { return nil })
		for _, err := range []error{err, err2} {
			if !errors.Is(err, ErrCorrupt) || strings.Count(err.Error(), p) != 1 {
				t.Errorf("%s, not Zstandard: %v; want ErrCorrupt naming it once", name, err)
			}
		}
	}
	_, err := Open(dir)
	err2 := ScanKeyFile(dir, nil, func(int, []byte) error { return nil })
	for _, err := range []error{err, err2} {
		if !errors.Is(err, syscall.EISDIR) || strings.Count(err.Error(), dir) != 1 {
			t.Errorf("a directory: %v; want EISDIR naming it once", err)
		}
	}
	if _, err := ReadKeyFile(writeFile(t, "keys.bin", compress(t, []byte("a\nb\n"))), nil); err != nil {
		t.Errorf("Zstandard under another name: %v", err)
	}
}

// StdinPath reads os.Stdin, compressed or not, names it "stdin", and
// leaves it open: the process's standard input is not the reader's.
func TestOpenStdin(t *testing.T) {
	p := filepath.Join(t.TempDir(), "in.zst")
	if err := os.WriteFile(p, compress(t, []byte("a\nb\x00\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	in, restore := testutil.Stdin(t, p)
	defer restore()
	var keys []string
	err := ScanKeyFile(StdinPath, nil, func(_ int, key []byte) error {
		keys = append(keys, string(key))
		return nil
	})
	if len(keys) != 1 || keys[0] != "a" || err == nil || !strings.Contains(err.Error(), "stdin:2:") {
		t.Errorf("keys %q, error %v; want [a] and a NUL byte at stdin:2", keys, err)
	}
	if _, err := in.Seek(0, io.SeekStart); err != nil {
		t.Fatalf("stdin closed by ScanKeyFile: %v", err)
	}
	f, err := OpenKeys(StdinPath)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != "keys:stdin" {
		t.Errorf("name %q, want keys:stdin", f.Name())
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Seek(0, io.SeekStart); err != nil {
		t.Errorf("stdin closed by Close: %v", err)
	}
}
