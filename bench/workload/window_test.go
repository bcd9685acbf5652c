package workload

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
)

// zstdSegment returns a Zstandard frame that holds "a\n" in one raw block
// as a single segment that claims a content size of n bytes, its window.
func zstdSegment(n uint64) []byte {
	b := append(bytes.Clone(zstdMagic), 0xe0) // single segment, 8-byte content size
	b = binary.LittleEndian.AppendUint64(b, n)
	return append(b, 2<<3|1, 0, 0, 'a', '\n')
}

// zstdFrame returns a Zstandard frame that holds "a\n" in one raw block,
// with a window of 1<<log bytes (RFC 8878, 3.1.1.1: a frame header
// descriptor of 0, no content size; a window descriptor of exponent
// log-10, mantissa 0).
func zstdFrame(log int) []byte {
	return append(bytes.Clone(zstdMagic), 0, byte(log-10)<<3, 2<<3|1, 0, 0, 'a', '\n')
}

// A frame's header alone sets how much the decoder allocates (its whole
// window, at the first block): the fuzzing campaign's find was a 10-byte
// key file that allocated 512 MiB. Windows up to MaxWindow decode; a
// larger one is ErrCorrupt, before anything is allocated by it.
func TestZstdWindowCap(t *testing.T) {
	read := func(frame []byte) (out []byte, alloc uint64, err error) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r, err := Decompress(bytes.NewReader(frame))
		if err != nil {
			return nil, 0, err
		}
		defer r.Close()
		out, err = io.ReadAll(r)
		runtime.ReadMemStats(&after)
		return out, after.TotalAlloc - before.TotalAlloc, err
	}
	for _, log := range []int{10, 20} {
		if out, _, err := read(zstdFrame(log)); err != nil || string(out) != "a\n" {
			t.Errorf("window 2^%d: %q, %v", log, out, err)
		}
	}
	if testing.Short() {
		t.Log("-short: not allocating a window of MaxWindow")
	} else if out, _, err := read(zstdFrame(27)); err != nil || string(out) != "a\n" {
		t.Errorf("window 2^27 (MaxWindow): %q, %v", out, err)
	}
	for _, log := range []int{28, 29, 31} {
		out, alloc, err := read(zstdFrame(log))
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("window 2^%d: %q, %v; want ErrCorrupt", log, out, err)
		}
		if alloc > 16<<20 {
			t.Errorf("window 2^%d: refusing it allocated %d MiB", log, alloc>>20)
		}
		t.Log(err)
	}
	// One segment: the content size is the window, and a large one is
	// refused at once.
	if _, _, err := read(zstdSegment(2)); err != nil {
		t.Errorf("a segment of 2 bytes: %v", err)
	}
	if _, alloc, err := read(zstdSegment(1 << 28)); !errors.Is(err, ErrCorrupt) || alloc > 16<<20 {
		t.Errorf("a segment that claims 2^28 bytes: %v, %d MiB allocated; want ErrCorrupt and little", err, alloc>>20)
	}
}
