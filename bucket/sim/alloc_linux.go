//go:build linux

package sim

import (
	"fmt"
	"syscall"
	"unsafe"
)

// allocBins returns n zeroed counters outside the Go heap, backed by huge
// pages where the kernel has them (transparent huge pages in "madvise"
// mode, the common default, only for memory that asks). A random access
// into a gigabyte of 4 KiB pages misses the TLB nearly every time; with
// 2 MiB pages the page walks mostly go away. The memory is the kernel's
// zero pages until touched, and free returns it at once instead of leaving
// a gigabyte to the garbage collector.
//
// A map the kernel refuses is an error (ErrMemory): the Go heap, which
// gets its memory the same way, could not have it either, and the runtime
// would end the process with "fatal error: out of memory".
func allocBins[T counter](n uint64) (bins []T, free func(), err error) {
	var zero T
	size := int(n) * int(unsafe.Sizeof(zero))
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %d bins of %d bytes: %w", ErrMemory, n, unsafe.Sizeof(zero), err)
	}
	_ = syscall.Madvise(mem, 14) // MADV_HUGEPAGE; an error only costs speed
	return unsafe.Slice((*T)(unsafe.Pointer(&mem[0])), n), func() { _ = syscall.Munmap(mem) }, nil
}
