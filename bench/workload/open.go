package workload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/klauspost/compress/zstd"
)

// zstdMagic opens every Zstandard frame (RFC 8878, section 3.1.1).
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// StdinPath is the path that stands for standard input, as "-" does for
// Unix tools: Open and every function here that opens a file by path read
// os.Stdin for it (and do not close it), and call it "stdin" in errors and
// workload names (InputName). A file named "-" is still "./-".
const StdinPath = "-"

// InputName is how errors and workload names call the input at path:
// "stdin" for StdinPath, else path itself.
func InputName(path string) string {
	if path == StdinPath {
		return "stdin"
	}
	return path
}

// baseName is the workload name of the input at path: its base name, or
// "stdin".
func baseName(path string) string { return filepath.Base(InputName(path)) }

// Open opens the named file for reading (standard input for StdinPath). If the file starts with the
// Zstandard magic number it is decompressed as it is read, in-process and
// on one goroutine, whatever its name; a truncated or corrupt stream gives
// an error wrapping ErrCorrupt rather than a short read. (Zstandard may only
// detect a corrupted block by its frame's checksum, at the end of the frame,
// so a reader may first report the garbage it decoded as a malformed line.)
// A file named .zst or .zstd that is not Zstandard is an ErrCorrupt error,
// not text: its lines would not be what the name promises. A directory is
// an error wrapping syscall.EISDIR. Errors name the file once. The caller
// must close the result.
func Open(path string) (io.ReadCloser, error) {
	f, closeFile, err := openFile(path)
	if err != nil {
		return nil, err
	}
	r, err := decompressFile(InputName(path), f)
	if err != nil {
		closeFile()
		return nil, err
	}
	return &fileReader{Reader: r, closeFile: closeFile}, nil
}

// openFile opens path for reading, and refuses a directory at once (its
// first read would fail, with an error that names it). For StdinPath it
// returns os.Stdin, and a close that leaves it open: the process's
// standard input is not the reader's to close.
func openFile(path string) (f *os.File, closeFile func() error, err error) {
	if path == StdinPath {
		f, closeFile = os.Stdin, func() error { return nil }
	} else if f, err = os.Open(path); err != nil {
		return nil, nil, fmt.Errorf("workload: %w", err)
	} else {
		closeFile = f.Close
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		closeFile()
		return nil, nil, fmt.Errorf("workload: %w", &fs.PathError{Op: "read", Path: InputName(path), Err: syscall.EISDIR})
	}
	return f, closeFile, nil
}

// decompressFile is Decompress on r, the file named path: a name that says
// Zstandard must be (see Open), and errors name the file once.
func decompressFile(path string, r io.Reader) (io.ReadCloser, error) {
	rc, err := Decompress(r)
	if err != nil {
		return nil, naming(path, err)
	}
	if _, zstd := rc.(*zstdReader); !zstd && zstdName(path) {
		rc.Close()
		return nil, fmt.Errorf("%w: %s: not Zstandard, though its name says so (it does not start with Zstandard's magic number)", ErrCorrupt, path)
	}
	return rc, nil
}

// zstdName reports whether a file name says Zstandard.
func zstdName(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".zst" || ext == ".zstd"
}

// naming adds the input's name to err, unless err names it already (the
// errors of an os.File's reads do).
func naming(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("%w (%s)", err, name)
}

// MaxWindow is the largest Zstandard window Decompress accepts: 128 MiB,
// the reference zstd tool's default limit when it decompresses (a larger
// window needs its --long or --memory). The decoder allocates a frame's
// whole window when it decodes the first block, whatever the frame holds,
// and the frame header alone sets it: with the decoder's own limit, 512
// MiB, a 10-byte file made a key file reader allocate 512 MiB to read one
// key. A larger window is an ErrCorrupt error that says so; so is a
// single-segment frame (whose window is its content size) of more than
// MaxWindow bytes, which zstd writes only with a window that large.
const MaxWindow = 128 << 20

// Decompress returns r itself, buffered, if it does not start with the
// Zstandard magic number, and otherwise a reader of its decompressed
// bytes. Closing the result releases the decoder, not r. A frame whose
// window is larger than MaxWindow is an ErrCorrupt error.
func Decompress(r io.Reader) (io.ReadCloser, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(len(zstdMagic))
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("workload: %w", err)
	}
	if !bytes.Equal(head, zstdMagic) {
		return io.NopCloser(br), nil
	}
	// One goroutine: the decoder then decodes as it is read, and a trace
	// replay needs no more speed than that. The window is capped (see
	// MaxWindow).
	d, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(MaxWindow))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return &zstdReader{d: d}, nil
}

// zstdReader marks the decoder's errors as ErrCorrupt.
type zstdReader struct {
	d *zstd.Decoder
}

func (z *zstdReader) Read(p []byte) (int, error) {
	n, err := z.d.Read(p)
	switch {
	case errors.Is(err, zstd.ErrWindowSizeExceeded), errors.Is(err, zstd.ErrDecoderSizeExceeded):
		err = fmt.Errorf("%w: %w: it needs a window of over %d MiB (decompress it first: zstd -d --long=31)", ErrCorrupt, err, MaxWindow>>20)
	case err != nil && err != io.EOF:
		err = fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return n, err
}

func (z *zstdReader) Close() error {
	z.d.Close()
	return nil
}

type fileReader struct {
	io.Reader
	closeFile func() error
}

func (f *fileReader) Close() error {
	var err error
	if c, ok := f.Reader.(io.Closer); ok {
		err = c.Close()
	}
	return errors.Join(err, f.closeFile())
}

// File is a workload read from a file; Close closes the file.
type File[K comparable] struct {
	Workload[K]
	io.Closer
}

// OpenARC opens an ARC trace, compressed or not (see [Open] and [NewARC]).
// The workload is named after the file's base name.
func OpenARC(path string) (*File[uint64], error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	return &File[uint64]{NewARC(baseName(path), r), r}, nil
}

// OpenLIRS opens a LIRS trace, compressed or not (see [Open] and
// [NewLIRS]).
func OpenLIRS(path string) (*File[uint64], error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	return &File[uint64]{NewLIRS(baseName(path), r), r}, nil
}

// OpenKeys opens a key file, compressed or not (see [Open] and [NewKeys]).
func OpenKeys(path string) (*File[string], error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	return &File[string]{NewKeys(baseName(path), r), r}, nil
}

// ReadWeighted reads a weighted key file, compressed or not (see [Open] and
// [NewWeighted]), and closes it.
func ReadWeighted(path string, seed uint64) (*Weighted, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	w, err := NewWeighted(baseName(path), r, seed)
	return w, errors.Join(err, r.Close())
}
