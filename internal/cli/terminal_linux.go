package cli

import (
	"os"
	"syscall"
	"unsafe"
)

// isTerminal asks the kernel for f's terminal attributes (TCGETS, what
// isatty(3) does): only a terminal has them. /dev/null and other
// character devices answer ENOTTY. The descriptor is reached through
// SyscallConn, not Fd, which would put a pipe in blocking mode.
func isTerminal(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var errno syscall.Errno
	err = rc.Control(func(fd uintptr) {
		var t syscall.Termios
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	})
	return err == nil && errno == 0
}
