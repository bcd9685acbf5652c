package serve

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/twochoice/twochoice/bench/workload"
)

// Sentinel errors, for errors.Is.
var (
	// ErrKeys: the key file cannot be used.
	ErrKeys = errors.New("serve: bad key file")
	// ErrConfig: a Config that cannot be served.
	ErrConfig = errors.New("serve: bad configuration")
)

// maxKeyLine bounds one line of a key file.
const maxKeyLine = 1 << 20

// ReadKeys reads a key file (see the package doc). progress, if not nil,
// is told the fraction of the file read so far, now and then. A file
// with no key, or a line holding a NUL byte (most likely a binary file
// given by mistake) or longer than 1 MiB, is an error wrapping ErrKeys
// that names the file and the line.
func ReadKeys(path string, progress func(frac float64)) ([]string, error) {
	var keys []string
	err := EachKey(path, progress, func(_ int, key []byte) {
		keys = append(keys, string(key))
	})
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: %s: no keys", ErrKeys, path)
	}
	return keys, nil
}

// EachKey reads a key file as ReadKeys does and calls fn with each key
// and its line number (from 1), without keeping the keys: the one reader
// of key files for every command that takes one, so that a file means
// the same keys to all of them. key is valid only during the call. A file
// with no key is not an error here. Errors wrap ErrKeys and name the file
// and the line; fn may have been called for the lines before.
func EachKey(path string, progress func(frac float64), fn func(line int, key []byte)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrKeys, err)
	}
	defer f.Close()
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	cr := &countingReader{r: f}
	dr, err := workload.Decompress(cr)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrKeys, path, err)
	}
	defer dr.Close()
	sc := bufio.NewScanner(dr)
	sc.Buffer(make([]byte, 64<<10), maxKeyLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		if i := bytes.IndexByte(b, '\t'); i >= 0 {
			b = b[:i]
		}
		if len(b) == 0 {
			continue
		}
		if bytes.IndexByte(b, 0) >= 0 {
			return fmt.Errorf("%w: %s:%d: NUL byte (a binary file?)", ErrKeys, path, line)
		}
		fn(line, b)
		if progress != nil && line%65536 == 0 && size > 0 {
			progress(float64(cr.n) / float64(size))
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%w: %s:%d: a line over %d bytes", ErrKeys, path, line+1, maxKeyLine)
		}
		return fmt.Errorf("%w: %s: %w", ErrKeys, path, err)
	}
	if progress != nil {
		progress(1)
	}
	return nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
