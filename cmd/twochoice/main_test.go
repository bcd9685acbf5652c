package main

import (
	"bytes"
	"strings"
	"testing"
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
	for _, c := range commands {
		if code, _, errOut := runCLI(c.name, "--help"); code != 0 || !strings.Contains(errOut, "Usage: twochoice "+c.name) {
			t.Errorf("%s --help: code %d, stderr %q", c.name, code, errOut)
		}
		if code, _, _ := runCLI(c.name, "--no-such-flag"); code != exitUsage {
			t.Errorf("%s with a bad flag: code %d, want %d", c.name, code, exitUsage)
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
