package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/internal/testfs"
)

// A write that fails on a full disk leaves the file already there whole
// and no temporary file; a named pipe is refused, not replaced.
func TestReplaceFile(t *testing.T) {
	dir := testfs.SmallTmpfs(t, "64k")
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
