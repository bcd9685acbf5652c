package near

import (
	"errors"
	"fmt"
)

// Options bounds a near-cache. The zero value means DefaultMaxBytes.
type Options struct {
	// MaxEntries bounds the keys held: the replies of one key to several
	// commands (GET, HGET with different fields, …) share one entry.
	// 0 means no bound in entries.
	MaxEntries int

	// MaxBytes bounds the memory held: every entry is weighed as its
	// slot in the cache's table, its key, and each of its replies (the
	// reply's struct, its command and the message's size as the client
	// reports it), and the entries never weigh more than MaxBytes (see
	// "Memory" in package tier). 0 means no bound in bytes. With both
	// bounds set, both hold.
	MaxBytes int64
}

// DefaultMaxBytes is the bound of a near-cache whose Options set none.
const DefaultMaxBytes = 64 << 20

// minEntries is the smallest bound a near-cache takes: below it the
// cache's table is too small to bound.
const minEntries = 64

// ErrOptions is returned by New for options it cannot use.
var ErrOptions = errors.New("tier: invalid options")

// capacity returns the bound in entries that o comes to for a cache of K
// to V whose entries each take fixed bytes besides their slot and
// payload, or an error that wraps ErrOptions.
func capacity[K comparable, V any](o Options, fixed int64) (int, error) {
	switch {
	case o.MaxEntries < 0:
		return 0, fmt.Errorf("%w: MaxEntries %d is negative", ErrOptions, o.MaxEntries)
	case o.MaxBytes < 0:
		return 0, fmt.Errorf("%w: MaxBytes %d is negative", ErrOptions, o.MaxBytes)
	case o.MaxEntries > maxEntries:
		return 0, fmt.Errorf("%w: MaxEntries %d is above %d", ErrOptions, o.MaxEntries, maxEntries)
	case o.MaxEntries > 0 && o.MaxEntries < minEntries:
		return 0, fmt.Errorf("%w: MaxEntries %d is below %d", ErrOptions, o.MaxEntries, minEntries)
	}
	if o.MaxEntries == 0 && o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	n := o.MaxEntries
	if o.MaxBytes > 0 {
		b := entriesForBytes[K, V](o.MaxBytes, fixed)
		if n == 0 || b < n {
			n = b
		}
	}
	return n, nil
}
