//go:build !linux

package redistest

import "os/exec"

// setProcAttr does nothing here: only Linux ties a child's life to its
// parent's, and t.Cleanup stops the servers of a test that ends normally.
func setProcAttr(*exec.Cmd) {}
