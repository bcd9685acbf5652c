package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/internal/snapshot"
)

// editedCopy copies the snapshot at src and changes the copy's metadata
// with edit (rewriteMeta), leaving its records as they are.
func editedCopy(t *testing.T, src string, edit func(*snapshot.Meta)) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "edited.snap")
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rewriteMeta(t, dst, edit, 0)
	return dst
}

// TestOpenChecksLoadsAgainstMeta: a snapshot whose records are whole but
// whose metadata tells another story (buckets counted at the wrong loads,
// or a stash of another size) is corrupt, whichever way Open
// restores it: in place, or into a smaller table when the saved one is
// sparse (sparseFloor lowered here).
func TestOpenChecksLoadsAgainstMeta(t *testing.T) {
	s := grownAndEmptied(t, 12, 20_000, 50)
	_, path := saveOpen(t, s, nil)
	edits := map[string]func(*snapshot.Meta){
		// Each edit keeps the metadata consistent with itself and with
		// the number of records (as many buckets and entries), which the
		// reader checks on its own. (With those checks, the loads' match
		// implies the stash's: records = entries = loads + stash.)
		"two buckets at other loads": func(m *snapshot.Meta) {
			row := m.Histogram[0]
			row[1] -= 2
			row[0]++
			row[2]++
		},
		"a key in the stash instead of a bucket": func(m *snapshot.Meta) {
			m.Histogram[0][1]--
			m.Histogram[0][0]++
			m.Stash++
		},
	}
	for _, sparse := range []bool{false, true} {
		for what, edit := range edits {
			t.Run(fmt.Sprintf("sparse=%v/%s", sparse, what), func(t *testing.T) {
				if sparse {
					defer func(f uint64) { sparseFloor = f }(sparseFloor)
					sparseFloor = 1 << 10
				}
				bad := editedCopy(t, path, edit)
				r, err := Open[string, int](bad, nil)
				if r != nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), bad) {
					t.Fatalf("Open of a snapshot with %s in its metadata: %v, %v; want ErrCorrupt naming the file", what, r != nil, err)
				}
			})
		}
	}
}
