package workload

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
)

// Weighted is an endless workload of read requests for the keys of a
// weighted key file, drawn independently with probability proportional to
// their weights (package names weighted by downloads, for example). A draw
// costs O(1) whatever the number of keys, and allocates nothing.
type Weighted struct {
	name     string
	seed     uint64
	keys     []string
	drawable int // keys of positive weight
	table    *alias
	rng      rand.PCG
}

// weightedStream is the PCG stream of weighted key draws.
const weightedStream = 0x77676874 // "wght"

// NewWeighted reads a weighted key file from r and returns a workload that
// draws its keys from seed. name labels the workload and its errors.
//
// A line is "key<TAB>weight": the key is everything before the last tab
// (it may hold spaces and tabs, but no NUL), the weight a finite decimal
// number ≥ 0 (strconv.ParseFloat syntax; spaces around it are ignored). A
// trailing carriage return is dropped and blank lines are skipped. A key
// listed twice is an ErrDuplicate error; weights summing to zero, an
// ErrWeight error; a file with no keys, ErrEmpty. The whole file is read
// before NewWeighted returns.
func NewWeighted(name string, r io.Reader, seed uint64) (*Weighted, error) {
	l := newLines(name, r)
	var keys []string
	var weights []float64
	drawable := 0
	seen := make(map[string]int) // key → line
	var sum float64
	for {
		line, ok := l.next()
		if !ok {
			break
		}
		if len(line) == 0 {
			continue
		}
		tab := bytes.LastIndexByte(line, '\t')
		if tab < 0 {
			return nil, l.fail(line, fmt.Errorf("%w: want \"key<TAB>weight\"", ErrSyntax))
		}
		key, ws := line[:tab], trimSpace(line[tab+1:])
		if bytes.IndexByte(key, 0) >= 0 {
			return nil, l.fail(line, fmt.Errorf("%w: NUL byte (binary file?)", ErrSyntax))
		}
		w, err := strconv.ParseFloat(string(ws), 64)
		if err != nil || math.IsInf(w, 0) || math.IsNaN(w) || w < 0 {
			return nil, l.fail(line, fmt.Errorf("%w: %q is not a finite number ≥ 0", ErrWeight, ws))
		}
		k := string(key)
		if first, dup := seen[k]; dup {
			return nil, l.fail(line, fmt.Errorf("%w: first on line %d", ErrDuplicate, first))
		}
		seen[k] = l.n
		if len(keys) == math.MaxUint32 {
			return nil, l.fail(line, fmt.Errorf("%w: more than 2^32-1 keys", ErrRange))
		}
		keys = append(keys, k)
		weights = append(weights, w)
		sum += w
		if w > 0 {
			drawable++
		}
	}
	if l.err != io.EOF {
		return nil, l.err
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: %s has no weighted keys", ErrEmpty, name)
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return nil, fmt.Errorf("%w: %s: weights sum to %v", ErrWeight, name, sum)
	}
	wt := &Weighted{name: name, seed: seed, keys: keys, drawable: drawable, table: newAlias(weights)}
	wt.rng.Seed(seed, weightedStream)
	return wt, nil
}

// Name returns "weighted:NAME(keys=N,seed=SEED)".
func (w *Weighted) Name() string {
	return fmt.Sprintf("weighted:%s(keys=%d,seed=%d)", w.name, len(w.keys), w.seed)
}

// Keys returns the file's keys in file order. The caller must not change
// the slice.
func (w *Weighted) Keys() []string { return w.keys }

// Drawable returns the number of keys of positive weight: the distinct
// keys a run can request (a key of weight 0 never is).
func (w *Weighted) Drawable() int { return w.drawable }

// Next returns the next key.
func (w *Weighted) Next() string { return w.keys[w.table.draw(w.rng.Uint64())] }

// Read fills reqs with read requests. It never fails.
func (w *Weighted) Read(reqs []Request[string]) (int, error) {
	for i := range reqs {
		reqs[i] = Request[string]{Key: w.keys[w.table.draw(w.rng.Uint64())]}
	}
	return len(reqs), nil
}

// Reseed returns a workload over the same keys and weights drawing from
// another seed, without reading the file again; the two share their tables
// and can be read by different goroutines.
func (w *Weighted) Reseed(seed uint64) *Weighted {
	c := &Weighted{name: w.name, seed: seed, keys: w.keys, drawable: w.drawable, table: w.table}
	c.rng.Seed(seed, weightedStream)
	return c
}
