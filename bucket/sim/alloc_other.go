//go:build !linux

package sim

// allocBins returns n zeroed counters (see alloc_linux.go for why Linux
// maps them itself).
func allocBins[T counter](n uint64) (bins []T, free func(), err error) {
	return make([]T, n), func() {}, nil
}
