//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// load --out checks its target again when the snapshot replaces it, not
// only before the load, so that a symbolic link to a text file, put at
// --out while the keys are read, cannot make the save replace the text
// file with a snapshot. The keys come through a named pipe, so that the load is
// under way (its checks done) until the test closes the pipe, once it has
// swapped --out. The swapped-in file must be left as it is, and load must
// fail saying why.
func TestLoadOutSwappedDuringLoad(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	precious := []byte("precious notes\n")
	small := writeKeys(t, 10)
	for _, c := range []struct {
		name     string
		existing bool // --out is a snapshot before the load
		swap     func(out string) error
		want     string // in the error
		link     bool   // --out is left a link to notes.txt
	}{
		{"new file, then a link", false, func(out string) error { return os.Symlink(notes, out) }, "is now a symbolic link to " + notes, true},
		{"snapshot, then a link", true, func(out string) error {
			if err := os.Remove(out); err != nil {
				return err
			}
			return os.Symlink(notes, out)
		}, "is now a symbolic link to " + notes, true},
		{"snapshot, then a text file", true, func(out string) error { return os.Rename(notes, out) }, "not a snapshot", false},
	} {
		if err := os.WriteFile(notes, precious, 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "k.snap")
		if c.existing {
			if code, _, errOut := runCLI("load", "--keys", small, "--out", out, "--quiet"); code != 0 {
				t.Fatalf("%s: the first load: %s", c.name, errOut)
			}
		}
		fifo := filepath.Join(t.TempDir(), "keys.txt")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		type result struct {
			code           int
			stdout, stderr string
		}
		results := make(chan result, 1)
		ended := make(chan error, 1)
		go func() {
			code, stdout, stderr := runCLI("load", "--keys", fifo, "--out", out, "--quiet")
			results <- result{code, stdout, stderr}
			ended <- fmt.Errorf("exit %d: %s", code, stderr)
		}()
		// load opens the pipe after it has checked --out.
		w := openWriter(t, fifo, ended)
		var keys bytes.Buffer
		for i := range 5000 {
			fmt.Fprintf(&keys, "key-%d\n", i)
		}
		if _, err := w.Write(keys.Bytes()); err != nil {
			t.Fatal(err)
		}
		if err := c.swap(out); err != nil {
			t.Fatal(err)
		}
		w.Close()
		r := <-results
		t.Logf("%s: %s", c.name, r.stderr)

		if r.code != exitFail || !strings.Contains(r.stderr, "--out "+out+" changed since it was checked") ||
			!strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, "the snapshot was not saved") {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and an error saying --out changed (%q)", c.name, r.code, r.stderr, exitFail, c.want)
		}
		if r.stdout != "" {
			t.Errorf("%s: stdout %q", c.name, r.stdout)
		}
		text := notes
		if !c.link {
			text = out
		}
		if got, err := os.ReadFile(text); err != nil || !bytes.Equal(got, precious) {
			t.Errorf("%s: the text file holds %d bytes (%.20q), %v; want it untouched", c.name, len(got), got, err)
		}
		if fi, err := os.Lstat(out); err != nil || (fi.Mode()&os.ModeSymlink != 0) != c.link {
			t.Errorf("%s: --out is %v, %v; want it as the swap left it", c.name, fi.Mode(), err)
		}
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "*.tmp-*")); len(left) != 0 {
			t.Errorf("%s: temporary files left: %v", c.name, left)
		}
	}
}
