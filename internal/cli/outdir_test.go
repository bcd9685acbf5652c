package cli

import (
	"strings"
	"testing"

	"github.com/twochoice/twochoice/internal/testutil"
)

// A directory that takes no file is named in WritableDir's error, and the
// probe file is not (no "open d/.twochoice-probe-2510569322: permission
// denied" after it).
func TestWritableDirNamesNoProbe(t *testing.T) {
	dir := testutil.ReadOnlyDir(t)
	err := WritableDir(dir)
	if err == nil || !strings.Contains(err.Error(), "cannot write in "+dir+": ") || strings.Contains(err.Error(), "probe") {
		t.Errorf("%v", err)
	}
}
