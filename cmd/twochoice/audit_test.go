package main

import (
	"strings"
	"testing"
	"time"
)

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

// A load whose ball count does not fit is a usage error, not a run of 2^63
// balls.
func TestSimHugeLoad(t *testing.T) {
	for _, args := range [][]string{
		{"--log2", "10", "--load", "1e300"},
		{"--bins", "3", "--load", "3.1e15"},
		{"--log2", "0", "--load", "2e16"},
		{"--log2", "40", "--load", "1e4"},
	} {
		args = append([]string{"sim", "--runs", "1", "--rule", "dchoice", "--quiet"}, args...)
		code, _, errOut := runCLIWithin(t, 10*time.Second, args...)
		if code != exitUsage || !strings.Contains(errOut, "2^53") {
			t.Errorf("%v: code %d, stderr %q", args, code, errOut)
		}
	}
}
