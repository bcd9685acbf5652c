package main

import (
	"strings"
	"testing"
)

// A rule listed twice in sim's or fluid's --rule is a usage error (exit 2)
// that names the rule, before any work; it used to run the rule twice and
// print two identical columns.
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
// names the flag and the value, exit status 2, before any work. bench's
// --capacity and --threads used to drop the repeat silently while its
// --caches and sim's --rule refused it.
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
