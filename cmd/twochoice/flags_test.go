package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A rule listed twice in sim's or fluid's --rule is a usage error (exit 2)
// that names the rule, before any work, rather than two identical columns.
func TestRepeatedRuleRefused(t *testing.T) {
	for _, args := range [][]string{
		{"sim", "--rule", "dchoice,dchoice", "--log2", "8", "--runs", "1", "--quiet"},
		{"sim", "--rule", "one, goleft,one", "--log2", "8", "--runs", "1", "--quiet"},
		{"fluid", "--rule", "goleft,dchoice,goleft"},
	} {
		code, out, errOut := runCLI(args...)
		if code != exitUsage || !strings.Contains(errOut, "listed twice") || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and an error naming the repeat", args, code, out, errOut, exitUsage)
		}
	}
	// Different rules, even ones with the same equations, are fine.
	if code, _, errOut := runCLI("fluid", "--rule", "dchoice,halves"); code != exitOK {
		t.Errorf("fluid --rule dchoice,halves: exit %d, stderr %q", code, errOut)
	}
}

// A value listed twice in any list flag is a usage error: one line that
// names the flag and the value, exit status 2, before any work, in every
// list flag alike (--rule, --caches, --capacity, --threads).
func TestRepeatedListValueRefused(t *testing.T) {
	// Small enough that a run the repeat does not stop ends at once.
	bench := []string{"bench", "--keys", "1000", "--duration", "1ms", "--quiet"}
	for _, tc := range []struct {
		args []string
		want string // stderr's first line
	}{
		{append(bench, "--capacity", "10,10", "--threads", "1", "--caches", "lru"), "twochoice bench: usage: --capacity 10,10: 10 is listed twice"},
		{append(bench, "--capacity", "1%, 5%,1%", "--threads", "1", "--caches", "lru"), "twochoice bench: usage: --capacity 1%, 5%,1%: 1% is listed twice"},
		{append(bench, "--capacity", "10", "--threads", "1,1", "--caches", "lru"), "twochoice bench: usage: --threads 1,1: 1 is listed twice"},
		{append(bench, "--capacity", "10", "--threads", "2,1,2", "--caches", "lru"), "twochoice bench: usage: --threads 2,1,2: 2 is listed twice"},
		{append(bench, "--capacity", "10", "--threads", "1", "--caches", "lru,map,lru"), "twochoice bench: usage: --caches lru,map,lru: lru is listed twice"},
		{[]string{"sim", "--rule", "dchoice,dchoice", "--log2", "8", "--runs", "1", "--quiet"}, "twochoice sim: usage: --rule dchoice,dchoice: dchoice is listed twice"},
		{[]string{"fluid", "--rule", "goleft,dchoice,goleft"}, "twochoice fluid: usage: --rule goleft,dchoice,goleft: goleft is listed twice"},
	} {
		code, out, errOut := runCLI(tc.args...)
		want := tc.want + "\nrun 'twochoice " + tc.args[0] + " --help' for usage\n"
		if code != exitUsage || out != "" || errOut != want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, out, errOut, exitUsage, want)
		}
	}
	// The same value written two ways is listed twice too, and the error
	// shows both.
	code, _, errOut := runCLI(append(bench, "--capacity", "1%,1.0%", "--threads", "1", "--caches", "lru")...)
	if code != exitUsage || !strings.HasPrefix(errOut, "twochoice bench: usage: --capacity 1%,1.0%: 1.0% is 1% again\n") {
		t.Errorf("--capacity 1%%,1.0%%: exit %d, stderr %q", code, errOut)
	}
}

// 0 choices or slots is a usage error, not the library's default.
func TestZeroChoicesAndBucketSize(t *testing.T) {
	keys := writeKeys(t, 10)
	out := filepath.Join(t.TempDir(), "b.snap")
	for _, args := range [][]string{
		{"sim", "--log2", "10", "--d", "0", "--rule", "goleft", "--runs", "1"},
		{"sim", "--log2", "10", "--d", "-1", "--rule", "one", "--runs", "1"},
		{"load", "--keys", keys, "--out", out, "--bucket-size", "0"},
		{"load", "--keys", keys, "--out", out, "--choices", "0"},
		{"load", "--keys", keys, "--out", out, "--placement", "one", "--choices", "3"},
		{"serve", "--keys", keys, "--addr", "127.0.0.1:0", "--choices", "0"},
		{"serve", "--keys", keys, "--addr", "127.0.0.1:0", "--bucket-size", "0"},
		{"hash", "--d", "0", "foo"},
	} {
		code, _, errOut := runCLIWithin(t, 10*time.Second, args...)
		if code != exitUsage {
			t.Errorf("%v: code %d, stderr %q", args, code, errOut)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a snapshot was written")
	}
}

// An empty value for a string flag is a usage error naming the flag, not
// the flag left out: otherwise an empty --sweep would run the default
// size, an empty --keys uniform balls, an empty --plot no chart and an
// empty --report the ordinary benchmark, all with exit status 0.
func TestEmptyFlagValue(t *testing.T) {
	dir := t.TempDir()
	keys := writeKeys(t, 10)
	for _, args := range [][]string{
		{"sim", "--sweep", ""},
		{"sim", "--keys", ""},
		{"sim", "--plot", ""},
		{"sim", "--rule", ""},
		{"fluid", "--plot", ""},
		{"bench", "--report", ""},
		{"bench", "--plot", ""},
		{"load", "--keys", "", "--out", filepath.Join(dir, "k.snap")},
		{"load", "--keys", keys, "--out", ""},
		{"inspect", filepath.Join(dir, "k.snap"), "--plot", ""},
		{"serve", "--keys", keys, "--name", "", "--addr", "127.0.0.1:0"},
		{"serve", "--keys", keys, "--snapshot", "", "--addr", "127.0.0.1:0"},
	} {
		var flag string
		for i, a := range args {
			if a == "" {
				flag = args[i-1]
			}
		}
		code, out, errOut := runCLIWithin(t, 10*time.Second, args...)
		want := "twochoice " + args[0] + ": usage: " + flag + ": an empty value\n"
		if code != exitUsage || out != "" || !strings.HasPrefix(errOut, want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q, want %d and %q", args, code, out, errOut, exitUsage, want)
		}
	}
}
