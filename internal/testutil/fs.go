package testutil

import (
	"os"
	"os/exec"
	"testing"
)

// SmallTmpfs mounts a tmpfs of the given size (mount's size option, such
// as "2m") on a new temporary directory, returns the directory, and
// unmounts it when the test ends. Mounting needs root: elsewhere, or where
// mount fails, the test is skipped with the reason.
func SmallTmpfs(t testing.TB, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	// Cleanups run last-in first-out: this one before TempDir's removal.
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir
}

// ReadOnlyDir mounts an empty tmpfs read-only on a new temporary directory
// and returns it: a directory no one, root included, can create a file in
// (permission bits do not stop root). Where mounting fails, or needs root,
// the test is skipped with the reason.
func ReadOnlyDir(t testing.TB) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a read-only tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir
}

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
