package testutil

import (
	"testing"
)

// SkipOneGoroutine skips t in the short suite under the race detector.
// It is for a long test whose work runs on one goroutine: the detector
// slows such a test several times over and has nothing to find in it, and
// CI's suite without -race runs it in full. why names the work.
func SkipOneGoroutine(t testing.TB, why string) {
	t.Helper()
	if Race && testing.Short() {
		t.Skip(why + ", on one goroutine: run in full by the suite without -race")
	}
}
