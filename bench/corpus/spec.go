package corpus

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/twochoice/twochoice/bench/workload"
)

// The errors of the package.
var (
	// ErrConfig: a corpus or a run cannot be made as asked (an empty list,
	// a folder without traces, a capacity past a workload's keys, no
	// twochoice or no peer).
	ErrConfig = errors.New("corpus: bad configuration")
	// ErrCheck: a replay broke a bound that no correct replay breaks (see
	// the package documentation, Checks).
	ErrCheck = errors.New("corpus: a replay broke a bound")
)

// Item is one workload of a corpus: a trace file, or a generated stream
// (Zipf, aging or synthetic).
type Item struct {
	// Name labels the workload's rows: the trace's path inside the
	// folder it was found in, or its base name, without the extensions
	// (".lis.zst"); "zipf:S", "aging:S" or "synthetic:KIND" for a
	// generated stream.
	Name string
	// Path is the trace file; empty for a generated stream.
	Path string
	// S is the Zipf exponent of a generated stream.
	S float64
	// Aging: the stream is aging (workload.Aging, a key born every
	// AgingStep requests), not a fixed Zipf law.
	Aging bool
	// Kind is a synthetic stream's kind (workload.Synthetic); empty for
	// the others.
	Kind string
}

// AgingStep is the requests between two births of an aging:S workload.
const AgingStep = 16

// Generated reports whether the item is a generated stream.
func (it Item) Generated() bool { return it.Path == "" }

// Zipf reports whether the item is a Zipf stream.
func (it Item) Zipf() bool { return it.Generated() && !it.Aging && it.Kind == "" }

// Parse reads a corpus list: items separated by commas, each one of
//
//	zipf:S       a Zipf stream of exponent S (a finite S > 0)
//	aging:S      an aging stream: Zipf of exponent S over ranks counted
//	             back from the newest key, a key born every AgingStep
//	             requests (workload.Aging)
//	synthetic:K  a synthetic stream of kind K (workload.Synthetic: drift,
//	             phases, mixloop, zscan, oneoffs or uniform), or of every
//	             kind for synthetic:all
//	trace:FILE   the trace FILE
//	PATH         a trace file, or a folder: every trace in it and in its
//	             subfolders, in the order of their paths
//
// where a trace is a file named *.lis or *.trace, compressed (.zst, .zstd)
// or not; other files in a folder (README.md) are left alone. A folder
// with no trace, a bad item, or two workloads of the same name (the same
// trace reached twice, or "zipf:1" and "zipf:1.0") is an error wrapping
// ErrConfig; a path that cannot be read, the fs error.
func Parse(list string) ([]Item, error) {
	var items []Item
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		got, err := parseItem(f)
		if err != nil {
			return nil, err
		}
		for _, it := range got {
			if i := slices.IndexFunc(items, func(o Item) bool { return o.Name == it.Name }); i >= 0 {
				return nil, fmt.Errorf("%w: two workloads named %s (%s and %s)", ErrConfig, it.Name, describe(items[i]), describe(it))
			}
			if i := slices.IndexFunc(items, func(o Item) bool { return !o.Generated() && sameFile(o.Path, it.Path) }); i >= 0 {
				return nil, fmt.Errorf("%w: %s is listed twice (as %s and %s)", ErrConfig, it.Path, items[i].Name, it.Name)
			}
			items = append(items, it)
		}
	}
	return items, nil
}

// sameFile reports whether two trace paths are the same file.
func sameFile(a, b string) bool {
	if b == "" {
		return false
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

func describe(it Item) string {
	if it.Generated() {
		return it.Name
	}
	return it.Path
}

func parseItem(f string) ([]Item, error) {
	if f == "" {
		return nil, fmt.Errorf("%w: an empty item in the corpus list", ErrConfig)
	}
	if k, ok := strings.CutPrefix(f, "synthetic:"); ok {
		kinds := []string{k}
		if k == "all" {
			kinds = workload.SyntheticKinds
		} else if !slices.Contains(workload.SyntheticKinds, k) {
			return nil, fmt.Errorf("%w: %q: want synthetic:KIND with KIND one of %s, or synthetic:all", ErrConfig, f, strings.Join(workload.SyntheticKinds, ", "))
		}
		items := make([]Item, len(kinds))
		for i, k := range kinds {
			items[i] = Item{Name: "synthetic:" + k, Kind: k}
		}
		return items, nil
	}
	for _, kind := range []string{"zipf", "aging"} {
		s, ok := strings.CutPrefix(f, kind+":")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: %q: want %s:S with a finite exponent S > 0", ErrConfig, f, kind)
		}
		return []Item{{Name: kind + ":" + strconv.FormatFloat(v, 'g', -1, 64), S: v, Aging: kind == "aging"}}, nil
	}
	path, explicit := strings.CutPrefix(f, "trace:")
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	if !fi.IsDir() {
		return []Item{{Name: traceName(filepath.Base(path)), Path: path}}, nil
	}
	if explicit {
		return nil, fmt.Errorf("%w: trace:%s is a folder; name it without trace: to replay the traces in it", ErrConfig, path)
	}
	var items []Item
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !isTrace(d.Name()) {
			return nil
		}
		rel, err := filepath.Rel(path, p)
		if err != nil {
			return err
		}
		items = append(items, Item{Name: traceName(filepath.ToSlash(rel)), Path: p})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%w: %s holds no trace (*.lis or *.trace, compressed or not)", ErrConfig, path)
	}
	return items, nil
}

// stripCompression drops a name's .zst or .zstd.
func stripCompression(name string) string {
	for _, ext := range []string{".zst", ".zstd"} {
		if n, ok := strings.CutSuffix(name, ext); ok {
			return n
		}
	}
	return name
}

// isTrace reports whether a file name is that of a trace.
func isTrace(name string) bool {
	n := stripCompression(name)
	return strings.HasSuffix(n, ".lis") || strings.HasSuffix(n, ".trace")
}

// traceName is a trace's label: its name without the compression and
// format extensions.
func traceName(name string) string {
	n := stripCompression(name)
	return strings.TrimSuffix(n, filepath.Ext(n))
}
