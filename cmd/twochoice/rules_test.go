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
