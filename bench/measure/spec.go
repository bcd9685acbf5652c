package measure

import (
	"fmt"
	"math"
	"strings"

	"github.com/twochoice/twochoice/bench/workload"
)

// Kind is the kind of a workload.
type Kind uint8

const (
	// Zipf draws keys 0 … Keys-1 with P(rank r) ∝ 1/(r+1)^S.
	Zipf Kind = iota
	// Uniform draws keys 0 … Keys-1 uniformly.
	Uniform
	// Scan requests keys 0 … Keys-1 in order, over and over.
	Scan
	// Trace replays a block trace file (ARC or LIRS format).
	Trace
	// Keys replays a key file (workload.NewKeys): one string key a line,
	// or a TSV's first column.
	Keys
	// Weighted draws the string keys of a "key<TAB>weight" file in
	// proportion to their weights.
	Weighted
)

var kindNames = [...]string{Zipf: "zipf", Uniform: "uniform", Scan: "scan", Trace: "trace", Keys: "keys", Weighted: "weighted"}

// String returns the kind's name in a spec: "zipf", "trace" and so on.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Spec says which workload to run.
type Spec struct {
	Kind Kind
	Path string  // the file of Trace, Keys and Weighted
	S    float64 // Zipf's exponent
	Keys uint64  // the number of keys of Zipf, Uniform and Scan
}

// ParseSpec reads a workload as the bench command names it: "zipf",
// "uniform", "scan", "trace:FILE", "keys:FILE" or "weighted:FILE"; s and
// keys are the exponent and the key count of the generators (ignored by
// the file kinds). Errors wrap ErrWorkload.
func ParseSpec(spec string, s float64, keys uint64) (Spec, error) {
	name, path, hasPath := strings.Cut(spec, ":")
	for k, n := range kindNames {
		if n != name {
			continue
		}
		sp := Spec{Kind: Kind(k), Path: path, S: s, Keys: keys}
		if sp.file() {
			if !hasPath || path == "" {
				return Spec{}, fmt.Errorf("%w: %q needs a file: %s:FILE", ErrWorkload, spec, name)
			}
			return sp, nil
		}
		if hasPath {
			return Spec{}, fmt.Errorf("%w: %q takes no file", ErrWorkload, spec)
		}
		if keys < 1 {
			return Spec{}, fmt.Errorf("%w: %s over %d keys", ErrWorkload, name, keys)
		}
		if sp.Kind == Zipf && (!(s > 0) || math.IsInf(s, 0)) {
			return Spec{}, fmt.Errorf("%w: zipf exponent %v, want a finite s > 0", ErrWorkload, s)
		}
		// The generators' own bounds, here so that a command can tell a
		// bad key count (ErrWorkload from ParseSpec) from a failed run.
		if sp.Kind == Zipf && keys > workload.MaxZipfKeys {
			return Spec{}, fmt.Errorf("%w: zipf over %d keys, want at most 2^53", ErrWorkload, keys)
		}
		if sp.Kind == Scan {
			if err := checkScanKeys(keys); err != nil {
				return Spec{}, err
			}
		}
		return sp, nil
	}
	return Spec{}, fmt.Errorf("%w: %q: want zipf, uniform, scan, trace:FILE, keys:FILE or weighted:FILE", ErrWorkload, spec)
}

// file reports whether the workload is read from a file.
func (s Spec) file() bool { return s.Kind >= Trace }

// StringKeys reports whether the workload's keys are strings (key files)
// rather than integers.
func (s Spec) StringKeys() bool { return s.Kind == Keys || s.Kind == Weighted }

// String returns the spec as ParseSpec reads it, with the generators'
// parameters: "zipf(s=1,keys=1000000)", "trace:OLTP.lis.zst".
func (s Spec) String() string {
	switch s.Kind {
	case Zipf:
		return fmt.Sprintf("zipf(s=%g,keys=%d)", s.S, s.Keys)
	case Uniform, Scan:
		return fmt.Sprintf("%v(keys=%d)", s.Kind, s.Keys)
	}
	return s.Kind.String() + ":" + s.Path
}
