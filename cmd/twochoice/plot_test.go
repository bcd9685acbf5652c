package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twochoice/twochoice/internal/testutil"
)

// A bad --plot is refused before any work, as a usage error.
func TestPlotCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "k.snap")
	if code, _, errOut := runCLI("load", "--keys", writeKeys(t, 100), "--out", snap, "--quiet"); code != 0 {
		t.Fatalf("load: %d %q", code, errOut)
	}
	for _, plot := range []string{filepath.Join(dir, "out.txt"), filepath.Join(dir, "nosuch", "x.svg")} {
		for _, args := range [][]string{
			// Long enough to fail the deadline if the work ran first.
			{"sim", "--log2", "30", "--runs", "50", "--rule", "dchoice", "--quiet"},
			{"bench", "--keys", "100000000", "--duration", "1s"},
			{"fluid", "--rule", "goleft", "--d", "8", "--load", "1000"},
			{"inspect", snap},
		} {
			args = append(args, "--plot", plot)
			code, _, errOut := runCLIWithin(t, 5*time.Second, args...)
			if code != exitUsage || !strings.Contains(errOut, "--plot") {
				t.Errorf("%v: code %d, stderr %q", args, code, errOut)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
		t.Errorf("out.txt written")
	}
}

// A --plot that cannot be written (a full disk) fails the command and
// leaves the chart already there whole, not truncated or half written.
func TestPlotKeptOnFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := testutil.SmallTmpfs(t, "64k")
	chart := filepath.Join(dir, "shares.svg")
	if code, _, errOut := runCLI("fluid", "--plot", chart); code != 0 {
		t.Fatalf("fluid --plot: exit %d, %s", code, errOut)
	}
	old, err := os.ReadFile(chart)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "filler"), make([]byte, 1<<20), 0o644) // fills the disk, and fails
	code, _, errOut := runCLI("sim", "--log2", "10", "--runs", "2", "--quiet", "--plot", chart)
	if code != exitFail || !strings.Contains(errOut, "no space left") {
		t.Errorf("sim --plot on a full disk: exit %d, stderr %q", code, errOut)
	}
	if now, _ := os.ReadFile(chart); string(now) != string(old) {
		t.Errorf("the chart changed: %d bytes, were %d", len(now), len(old))
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// --plot naming a named pipe is a usage error, before the work, and the
// pipe stays: an atomic replace would put a regular file in its place
// (and, through a link, in place of a device node such as /dev/full).
func TestPlotNotARegularFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe.svg")
	if out, err := exec.Command("mkfifo", fifo).CombinedOutput(); err != nil {
		t.Skipf("mkfifo: %v %s", err, out)
	}
	code, out, errOut := runCLI("fluid", "--plot", fifo)
	if code != exitUsage || out != "" || !strings.Contains(errOut, "--plot") || !strings.Contains(errOut, "not a regular file") {
		t.Errorf("code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode().Type() != os.ModeNamedPipe {
		t.Errorf("the named pipe was replaced: %v %v", fi.Mode(), err)
	}
}

// A chart that cannot be written once the work is done (its disk filled
// up meanwhile) fails the command, but the results are printed first, so
// a run that may have taken hours is not lost with the chart. Every
// command with --plot does the same.
func TestResultsPrintedWhenPlotFails(t *testing.T) {
	dir := testutil.SmallTmpfs(t, "64k")
	snap := filepath.Join(t.TempDir(), "k.snap")
	if code, _, errOut := runCLI("load", "--keys", writeKeys(t, 100), "--out", snap, "--quiet"); code != 0 {
		t.Fatalf("load: %d %q", code, errOut)
	}
	chart := filepath.Join(dir, "c.svg")
	os.WriteFile(filepath.Join(dir, "filler"), make([]byte, 1<<20), 0o644) // fills the disk, and fails
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--log2", "10", "--runs", "2", "--rule", "dchoice", "--quiet"}, "dchoice sim"},
		{[]string{"sim", "--log2", "10", "--runs", "2", "--rule", "dchoice", "--quiet", "--format", "json"}, `"share_at_least"`},
		{[]string{"fluid"}, "dchoice d=2"},
		{[]string{"inspect", snap, "--quiet"}, "bucket/fluid"},
		{[]string{"bench", "--keys", "1000", "--duration", "1ms", "--threads", "1", "--caches", "lru"}, "lru"},
	} {
		code, out, errOut := runCLIWithin(t, 60*time.Second, append(c.args, "--plot", chart)...)
		if code != exitFail || !strings.Contains(errOut, "no space left") || !strings.Contains(out, c.want) {
			t.Errorf("%v: code %d, stderr %q, stdout %q", c.args, code, errOut, out)
		}
	}
	if _, err := os.Stat(chart); err == nil {
		t.Errorf("a chart was written")
	}
}
