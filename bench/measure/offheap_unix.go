//go:build unix

package measure

import "syscall"

// mapMemory maps size bytes of zeroed memory that the Go runtime does not
// manage, and returns it with the function that unmaps it; ok is false
// when the system refuses.
func mapMemory(size uintptr) (b []byte, free func(), ok bool) {
	b, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, false
	}
	return b, func() { _ = syscall.Munmap(b) }, true
}
