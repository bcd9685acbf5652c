//go:build unix

package plot

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/twochoice/twochoice/internal/testutil"
)

// A --plot path that is a named pipe, or a link to one (or to a device),
// is refused by CheckFile and WriteFile: a rename would replace the pipe,
// or the device node the link leads to (/dev/full, for a chart linked
// there), with a regular file holding the chart.
func TestNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.svg")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	link := filepath.Join(dir, "link.png")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, link} {
		if err := CheckFile(path); !errors.Is(err, ErrChart) {
			t.Errorf("CheckFile(%s): %v, want ErrChart", path, err)
		}
		if err := sample().WriteFile(path); !errors.Is(err, ErrChart) {
			t.Errorf("WriteFile(%s): %v, want ErrChart", path, err)
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode().Type() != os.ModeNamedPipe {
		t.Errorf("the named pipe was replaced: %v %v", fi.Mode(), err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode().Type() != os.ModeSymlink {
		t.Errorf("the link was replaced: %v %v", fi.Mode(), err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 2 {
		t.Errorf("files left: %v", left)
	}
}

// A link to a chart in a directory that takes no new file fails CheckFile,
// before the work: WriteFile writes its temporary file beside the chart
// the link leads to, so CheckFile probes that directory, not the link's;
// otherwise "sim --plot link.svg" would run and then fail, naming the
// temporary file.
func TestCheckFileFollowsLink(t *testing.T) {
	ro := testutil.SmallTmpfs(t, "1m")
	chart := filepath.Join(ro, "c.svg")
	if err := sample().WriteFile(chart); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-o", "remount,ro", ro).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only: %v %s", err, out)
	}
	link := filepath.Join(t.TempDir(), "link.svg")
	if err := os.Symlink(chart, link); err != nil {
		t.Fatal(err)
	}
	if err := CheckFile(link); !errors.Is(err, ErrChart) {
		t.Errorf("CheckFile: %v, want ErrChart", err)
	}
	err := sample().WriteFile(link)
	if err == nil || !strings.HasPrefix(err.Error(), "write "+link+": ") || strings.Contains(err.Error(), ".tmp-") {
		t.Errorf("WriteFile: %v, want an error naming the link and not the temporary file", err)
	}
}
