package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestHelpAndErrors(t *testing.T) {
	if code, out, _ := runCLI("--help"); code != 0 || !strings.Contains(out, "Commands:") {
		t.Fatalf("--help: code %d, out %q", code, out)
	}
	if code, _, errOut := runCLI("nosuch"); code != exitUsage || !strings.Contains(errOut, "unknown command") {
		t.Fatalf("unknown command: code %d, stderr %q", code, errOut)
	}
	if code, _, _ := runCLI(); code != exitUsage {
		t.Fatalf("no command: code %d", code)
	}
	if code, _, errOut := runCLI("help", "nosuch"); code != exitUsage || !strings.Contains(errOut, "unknown command") {
		t.Fatalf("help nosuch: code %d, stderr %q", code, errOut)
	}
	code, _, errOut := runCLI("sim", "--format", "xml")
	if code != exitUsage || strings.Count(errOut, "\n") != 2 || !strings.Contains(errOut, `"xml"`) {
		t.Fatalf("sim --format xml: code %d, stderr %q", code, errOut)
	}
	for _, c := range commands {
		// Help goes to stdout, as asked for; "help CMD" is the same.
		code, out, errOut := runCLI(c.name, "--help")
		// flag.PrintDefaults reports a flag.Value that cannot print its
		// zero value in the help itself.
		if code != 0 || !strings.HasPrefix(out, "Usage: twochoice "+c.name) || !strings.Contains(out, "Flags:") || errOut != "" || strings.Contains(out, "panic") {
			t.Errorf("%s --help: code %d, stdout %q, stderr %q", c.name, code, out, errOut)
		}
		if code, out2, _ := runCLI("help", c.name); code != 0 || out2 != out {
			t.Errorf("help %s: code %d, stdout %q, want %s --help's", c.name, code, out2, c.name)
		}
		// A bad flag: one line, and where to look, not every flag.
		code, out, errOut = runCLI(c.name, "--no-such-flag")
		want := "twochoice " + c.name + ": usage: flag provided but not defined: -no-such-flag\nrun 'twochoice " + c.name + " --help' for usage\n"
		if code != exitUsage || out != "" || errOut != want {
			t.Errorf("%s with a bad flag: code %d, stderr %q, want %d and %q", c.name, code, errOut, exitUsage, want)
		}
	}
}

func TestHashCommand(t *testing.T) {
	code, out, errOut := runCLI("hash", "--rule", "double", "--bins", "1009", "--d", "3", "alpha", "beta")
	if code != 0 || strings.Count(out, "\n") != 3 {
		t.Fatalf("code %d, out %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := runCLI("hash", "--rule", "double", "--bins", "1000", "x"); code != exitUsage || !strings.Contains(errOut, "prime or a power of two") {
		t.Fatalf("double over 1000 bins: code %d, stderr %q", code, errOut)
	}
	if code, _, _ := runCLI("hash", "--uint64", "x"); code != exitUsage {
		t.Fatalf("--uint64 with a non-integer key: code %d", code)
	}
}

// failWriter fails every write, as a full disk or a closed pipe does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// Output that cannot be written is a failure: exit 1 and a line on
// stderr, never exit 0 with the output lost.
func TestUnwritableOutputFails(t *testing.T) {
	dir := t.TempDir()
	keys := writeKeys(t, 10)
	for i, args := range [][]string{
		{"--help"},
		{"help"},
		{"load", "--help"},
		{"help", "load"},
		{"load", "--keys", keys, "--out", filepath.Join(dir, "a.snap"), "--quiet"},
		{"load", "--keys", keys, "--out", filepath.Join(dir, "b.snap"), "--quiet", "--format", "json"},
		{"inspect", filepath.Join(dir, "b.snap"), "--quiet"},
	} {
		var e bytes.Buffer
		code := run(args, failWriter{}, &e)
		if code != exitFail || !strings.Contains(e.String(), "no space left") {
			t.Errorf("%d %v: code %d, stderr %q", i, args, code, e.String())
		}
	}
}

// An unknown command, or a second one after help, is one line and where
// to look, as a command's bad flag is: not the list of commands after the
// error, and not "help sim extra" printing sim's help with exit status 0.
func TestUnknownCommandIsOneLine(t *testing.T) {
	for _, args := range [][]string{{"siim"}, {"--verbose"}, {"help", "siim"}, {"help", "sim", "extra"}} {
		code, out, errOut := runCLI(args...)
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		if code != exitUsage || out != "" || len(lines) != 2 || lines[1] != "run 'twochoice --help' for the commands" {
			t.Errorf("%q: code %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// runCLIWithin is runCLI that fails the test, instead of hanging it, when
// the command has not returned within d.
func runCLIWithin(t *testing.T, d time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	type result struct {
		code      int
		out, errs string
	}
	done := make(chan result, 1)
	go func() {
		c, o, e := runCLI(args...)
		done <- result{c, o, e}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.errs
	case <-time.After(d):
		t.Fatalf("%v: still running after %v", args, d)
		return 0, "", ""
	}
}

// version prints the module version the go command recorded: a release
// or pseudo-version as it is, (devel) with the commit where the build
// recorded one, and the Go version and platform after it.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, errOut := runCLI(args...)
		if code != 0 || !strings.HasPrefix(out, "twochoice ") || !strings.Contains(out, runtime.Version()) || errOut != "" {
			t.Errorf("%v: code %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	if code, _, errOut := runCLI("version", "extra"); code != exitUsage {
		t.Errorf("version extra: code %d, stderr %q", code, errOut)
	}
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "80b4e6f0"}, {Key: "vcs.time", Value: "2026-12-04T06:28:49Z"}, {Key: "vcs.modified", Value: "true"}}
	platform := " go1.26.8 " + runtime.GOOS + "/" + runtime.GOARCH
	for _, c := range []struct {
		info *debug.BuildInfo
		want string
	}{
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.1.0"}, Settings: vcs}, "twochoice v0.1.0" + platform},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261204062849-80b4e6f0+dirty"}}, "twochoice v0.0.0-20261204062849-80b4e6f0+dirty" + platform},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs}, "twochoice (devel) (80b4e6f0, 2026-12-04T06:28:49Z, modified)" + platform},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "twochoice (devel)" + platform},
	} {
		if got := versionLine(c.info); got != c.want {
			t.Errorf("versionLine(%+v) = %q, want %q", c.info.Main, got, c.want)
		}
	}
}
