//go:build !linux

package cli

import "os"

// isTerminal, where this package has no terminal ioctl to ask, takes any
// character device for a terminal: /dev/null included, so 2>/dev/null
// gets a bar drawn into it.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
