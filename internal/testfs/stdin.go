package testfs

import (
	"os"
	"testing"
)

// Stdin opens the file at path and makes it os.Stdin, for a test of code
// that reads standard input. It returns the file (still open, so the test
// can check that the code under test left it so) and a function that puts
// the old os.Stdin back and closes the file; call it when done.
func Stdin(t testing.TB, path string) (*os.File, func()) {
	t.Helper()
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdin
	os.Stdin = in
	return in, func() {
		os.Stdin = old
		in.Close()
	}
}
