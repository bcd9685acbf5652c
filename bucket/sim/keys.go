package sim

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/twochoice/twochoice/hashfn"
)

// KeyKind names where the keys of a key-driven run come from.
type KeyKind uint8

const (
	// SeqKeys are the integers 0, 1, 2, … as 64-bit keys.
	SeqKeys KeyKind = iota + 1
	// RandomKeys are uniform random 64-bit integers, drawn from the run's
	// seed (so they differ from run to run).
	RandomKeys
	// ProductKeys are the product set {0, …, k-1}^8: every 64-bit key whose
	// eight bytes each take one of k values, in mixed-radix order (byte 0
	// varies fastest). Such structured sets are the ones on which simple
	// tabulation is known to do worse than a random function (Dahlgaard,
	// Knudsen, Rotenberg and Thorup, SODA 2016). Under hashfn.Tabulation a
	// run's shares keep the limit's mean but spread 6 to 20 times wider
	// than under XXHash from 2^16 to 2^24 bins (hashfn.Tab says why), so
	// compare such runs by their mean over many runs with the runs' own
	// spread as the error, not the binomial error of independent bins.
	ProductKeys
	// FileKeys are the lines of a file, hashed as strings.
	FileKeys
)

// ErrKeys is returned for a key source that cannot supply the run.
var ErrKeys = errors.New("sim: bad key source")

// Keys is the key source of a key-driven run. Each key is one ball; a
// repeated key (a repeated line of a file) is a repeated ball and lands in
// the same candidates.
type Keys struct {
	Kind KeyKind
	// K is the number of values per byte of ProductKeys; 0 picks the
	// smallest k with k^8 ≥ the number of balls.
	K int
	// Lines are the keys of FileKeys, one ball each.
	Lines []string
	// Name is what the source is called in output: "seq", "random",
	// "product:K" or the file's path.
	Name string
}

// ParseKeys parses the --keys flag: "seq", "random", "product",
// "product:K", or the path of a key file, whose keys read returns in
// order (this package does not read files: twochoice passes the reader
// that every one of its commands reads key files with). An error of read
// is returned as it is: it names the file, and says what is wrong with it
// (wrapped in ErrKeys, "twochoice sim" printed "sim: sim: bad key source").
func ParseKeys(s string, read func(path string) ([]string, error)) (*Keys, error) {
	switch {
	case s == "seq":
		return &Keys{Kind: SeqKeys, Name: s}, nil
	case s == "random":
		return &Keys{Kind: RandomKeys, Name: s}, nil
	case s == "product":
		return &Keys{Kind: ProductKeys, Name: s}, nil
	case strings.HasPrefix(s, "product:"):
		k, err := strconv.Atoi(s[len("product:"):])
		if err != nil || k < 2 || k > 256 {
			return nil, fmt.Errorf("%w: %q: want product:K with K from 2 to 256", ErrKeys, s)
		}
		return &Keys{Kind: ProductKeys, K: k, Name: s}, nil
	}
	lines, err := read(s)
	if err != nil {
		return nil, err // read's own, naming the file
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("%w: %s has no keys", ErrKeys, s)
	}
	return &Keys{Kind: FileKeys, Lines: lines, Name: s}, nil
}

// Label names the source for output as a run of m balls uses it: Name,
// but "product:K" for ProductKeys, with the k that m balls make it pick
// when K is 0 (plain "product" picks a different k at each size).
func (ks *Keys) Label(m uint64) string {
	if ks.Kind == ProductKeys {
		if k, err := productK(ks.K, m); err == nil {
			return fmt.Sprintf("product:%d", k)
		}
	}
	return ks.Name
}

// ProductKey returns key i of the product set {0, …, k-1}^8: byte j of the
// key is digit j of i written in base k. i must be below k^8.
func ProductKey(k int, i uint64) uint64 {
	var key uint64
	for j := range 8 {
		key |= (i % uint64(k)) << (8 * j)
		i /= uint64(k)
	}
	return key
}

// productK is the number of values per byte for m product keys.
func productK(k int, m uint64) (int, error) {
	if k == 0 {
		k = 2
		for pow8(k) < m {
			k++
		}
	}
	if pow8(k) < m {
		return 0, fmt.Errorf("%w: product:%d has %d keys, fewer than %d balls", ErrKeys, k, pow8(k), m)
	}
	return k, nil
}

// pow8 is k^8, saturated at 2^64-1.
func pow8(k int) uint64 {
	p := uint64(1)
	for range 8 {
		if p > ^uint64(0)/uint64(k) {
			return ^uint64(0)
		}
		p *= uint64(k)
	}
	return p
}

// check reports whether the source can supply m balls.
func (ks *Keys) check(m uint64) error {
	switch ks.Kind {
	case SeqKeys, RandomKeys:
		return nil
	case ProductKeys:
		_, err := productK(ks.K, m)
		return err
	case FileKeys:
		if uint64(len(ks.Lines)) < m {
			return fmt.Errorf("%w: %s has %d keys, fewer than %d balls", ErrKeys, ks.Name, len(ks.Lines), m)
		}
		return nil
	}
	return fmt.Errorf("%w: kind %d", ErrKeys, ks.Kind)
}

// keyHasher hashes the keys of one run in order.
type keyHasher struct {
	ks   *Keys
	f    hashfn.Func
	next uint64 // index of the next key
	k    int    // ProductKeys: values per byte
	g    stream // RandomKeys: the key stream
}

func newKeyHasher(ks *Keys, f hashfn.Func, m uint64, seed uint64) *keyHasher {
	h := &keyHasher{ks: ks, f: f, g: newStream(seed)}
	if ks.Kind == ProductKeys {
		h.k, _ = productK(ks.K, m)
	}
	return h
}

// fill writes the hashes of the next len(dst) keys.
func (h *keyHasher) fill(dst []uint64) {
	switch h.ks.Kind {
	case SeqKeys:
		for i := range dst {
			dst[i] = h.f.Uint64(h.next + uint64(i))
		}
	case RandomKeys:
		for i := range dst {
			dst[i] = h.f.Uint64(h.g.next())
		}
	case ProductKeys:
		for i := range dst {
			dst[i] = h.f.Uint64(ProductKey(h.k, h.next+uint64(i)))
		}
	case FileKeys:
		for i := range dst {
			dst[i] = h.f.String(h.ks.Lines[h.next+uint64(i)])
		}
	}
	h.next += uint64(len(dst))
}
