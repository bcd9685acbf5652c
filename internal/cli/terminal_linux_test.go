package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"unsafe"
)

// Only a terminal is one: not /dev/null (a character device, which the
// old mode check took for a terminal, drawing bars into it under
// 2>/dev/null), a regular file or a pipe; and a pseudo-terminal is.
func TestIsTerminal(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, f := range map[string]*os.File{"/dev/null": null, "a regular file": file, "a pipe": w} {
		if IsTerminal(f) {
			t.Errorf("%s: IsTerminal = true", name)
		}
	}
	if IsTerminal(nil) {
		t.Error("IsTerminal(nil io.Writer) = true")
	}

	pty := openPTY(t)
	defer pty.Close()
	if !IsTerminal(pty) {
		t.Errorf("%s: IsTerminal = false, want true", pty.Name())
	}
}

// openPTY opens the terminal side of a new pseudo-terminal, or skips the
// test where the system has none to give.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	var n, unlock uint32
	ioctl := func(req uintptr, arg *uint32) syscall.Errno {
		rc, err := m.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var errno syscall.Errno
		rc.Control(func(fd uintptr) {
			_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(unsafe.Pointer(arg)))
		})
		return errno
	}
	if e := ioctl(syscall.TIOCSPTLCK, &unlock); e != 0 {
		t.Skipf("unlockpt: %v", e)
	}
	if e := ioctl(syscall.TIOCGPTN, &n); e != 0 {
		t.Skipf("ptsname: %v", e)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("opening the terminal side: %v", err)
	}
	return s
}
