package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/internal/testutil"
)

// A write that fails on a full disk leaves the file already there whole
// and no temporary file; a named pipe is refused, not replaced.
func TestReplaceFile(t *testing.T) {
	dir := testutil.SmallTmpfs(t, "64k")
	path := filepath.Join(dir, "results.md")
	old := []byte("complete results\n")
	if err := ReplaceFile(path, old); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "filler"), make([]byte, 1<<20), 0o644) // fills the disk, and fails
	err := ReplaceFile(path, bytes.Repeat([]byte("x"), 32<<10))
	if err == nil || !strings.HasPrefix(err.Error(), "write "+path+": ") || strings.Contains(err.Error(), ".tmp-") {
		t.Errorf("a full disk: %v", err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, old) {
		t.Errorf("the file changed: %q", now)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	fifo := filepath.Join(t.TempDir(), "pipe.md")
	if out, err := exec.Command("mkfifo", fifo).CombinedOutput(); err != nil {
		t.Skipf("mkfifo: %v %s", err, out)
	}
	if err := ReplaceFile(fifo, old); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a named pipe: %v", err)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode().Type() != os.ModeNamedPipe {
		t.Errorf("the named pipe was replaced: %v %v", fi.Mode(), err)
	}
}

// A link that leads to no file yet gets its target written, and stays a
// link: following only links that led somewhere, ReplaceFile replaced a
// dangling link with the file ("ln -s charts/new.svg c.svg; twochoice
// fluid --plot c.svg" left c.svg a regular file and charts/ empty).
func TestReplaceFileDanglingLink(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "charts"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "c.svg")
	if err := os.Symlink(filepath.Join("charts", "new.svg"), link); err != nil {
		t.Skipf("symlink: %v", err)
	}
	if err := ReplaceFile(link, []byte("chart\n")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode().Type() != os.ModeSymlink {
		t.Errorf("the link was replaced: %v %v", fi.Mode(), err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "charts", "new.svg")); err != nil || string(got) != "chart\n" {
		t.Errorf("the link's target: %q %v", got, err)
	}
}
