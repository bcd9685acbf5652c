package redistest

import (
	"os/exec"
	"syscall"
)

// setProcAttr makes the server die with the test process, so that a test
// binary killed by its timeout leaves no server behind.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
