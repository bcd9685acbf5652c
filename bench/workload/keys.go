package workload

import (
	"bytes"
	"fmt"
	"io"
)

// Key files are read by one set of rules, here, for every command that
// takes one (twochoice load, serve, sim, hash on stdin, and the bench
// harness's keys:FILE workload), so that a file means the same keys to all
// of them:
//
//   - one key a line; a line ends with "\n" or "\r\n";
//   - the key is the line up to its first tab, so a TSV whose first column
//     is the key is a key file too;
//   - a line whose key is empty (a blank line, or one that starts with a
//     tab) is skipped; other bytes, spaces and invalid UTF-8 included,
//     belong to the key;
//   - a line holding a NUL byte is an ErrSyntax error: text files have
//     none, so the input is most likely a binary file given by mistake;
//   - a line longer than MaxLine bytes is an ErrSyntax error;
//   - a file compressed with Zstandard is read as it is decompressed.
//
// Errors about a line are *LineError values that name the input and the
// line.

// keyLines reads the keys of a key file, line by line.
type keyLines struct {
	lines *lines
}

func newKeyLines(name string, r io.Reader) *keyLines {
	return &keyLines{lines: newLines(name, r)}
}

// next returns the next key and its line number (from 1). The key is
// valid until the following call. At the end, or on an error, it returns
// false and k.lines.err says which.
func (k *keyLines) next() (key []byte, line int, ok bool) {
	for {
		b, ok := k.lines.next()
		if !ok {
			return nil, 0, false
		}
		if bytes.IndexByte(b, 0) >= 0 {
			k.lines.fail(b, fmt.Errorf("%w: NUL byte (a binary file?)", ErrSyntax))
			return nil, 0, false
		}
		if i := bytes.IndexByte(b, '\t'); i >= 0 {
			b = b[:i]
		}
		if len(b) > 0 {
			return b, k.lines.n, true
		}
	}
}

// NewKeys returns the requests of a key file read from r (by the rules
// above; r is read as it is, see [Open] for decompression), as a stream:
// one read request a key, for the key as a string. name labels the
// workload and its errors. Each key read allocates its string.
func NewKeys(name string, r io.Reader) Workload[string] {
	return &keyFile{keys: newKeyLines(name, r)}
}

type keyFile struct {
	keys *keyLines
}

func (k *keyFile) Name() string { return "keys:" + k.keys.lines.name }

func (k *keyFile) Read(reqs []Request[string]) (int, error) {
	n := 0
	for n < len(reqs) {
		key, _, ok := k.keys.next()
		if !ok {
			break
		}
		reqs[n] = Request[string]{Key: string(key)}
		n++
	}
	if n > 0 || len(reqs) == 0 {
		return n, nil
	}
	return 0, k.keys.lines.err
}

// ScanKeys reads a key file from r, decompressing it if it is Zstandard,
// and calls fn with each key and its line number (from 1); name labels
// errors. The key is valid only during the call. If fn returns an error,
// ScanKeys stops and returns it. Otherwise it returns nil at the end of
// the input (a file without keys included) or the first error of the
// input, after calling fn for the keys before it.
func ScanKeys(name string, r io.Reader, fn func(line int, key []byte) error) error {
	dr, err := Decompress(r)
	if err != nil {
		return naming(name, err)
	}
	defer dr.Close()
	return scanKeys(newKeyLines(name, dr), nil, fn)
}

// ScanKeyFile is ScanKeys on the named file, opened as [Open] opens one
// (a directory, or a file named .zst that is not Zstandard, is an error;
// StdinPath is standard input); errors name the file by path (InputName),
// once. progress, if not nil, is told the fraction of the file read so
// far now and then, and 1 at the end.
func ScanKeyFile(path string, progress func(frac float64), fn func(line int, key []byte) error) error {
	f, closeFile, err := openFile(path)
	if err != nil {
		return err
	}
	defer closeFile()
	name := InputName(path)
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	cr := &countingReader{r: f}
	dr, err := decompressFile(name, cr)
	if err != nil {
		return err
	}
	defer dr.Close()
	var report func()
	if progress != nil && size > 0 {
		report = func() { progress(min(float64(cr.n)/float64(size), 1)) }
	}
	if err := scanKeys(newKeyLines(name, dr), report, fn); err != nil {
		return err
	}
	if progress != nil {
		progress(1)
	}
	return nil
}

// ReadKeyFile returns the keys of the named file, in order, repeats
// included (see ScanKeyFile). A file without keys is an ErrEmpty error.
func ReadKeyFile(path string, progress func(frac float64)) ([]string, error) {
	var keys []string
	err := ScanKeyFile(path, progress, func(_ int, key []byte) error {
		keys = append(keys, string(key))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrEmpty, InputName(path))
	}
	return keys, nil
}

// scanKeys calls fn for every key of k, and report (if not nil) every
// 65536 keys.
func scanKeys(k *keyLines, report func(), fn func(line int, key []byte) error) error {
	for n := 1; ; n++ {
		key, line, ok := k.next()
		if !ok {
			break
		}
		if err := fn(line, key); err != nil {
			return err
		}
		if report != nil && n%65536 == 0 {
			report()
		}
	}
	if k.lines.err == io.EOF {
		return nil
	}
	return k.lines.err
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
