// Package race reports whether the program was built with the race
// detector (go build -race, go test -race).
//
// Code asks it for two reasons: memory the detector does not know of
// (an mmap outside the Go heap) must not be used under it, and tests
// whose work is long and single-goroutine run a smaller instance under
// it, since the detector slows memory accesses several times over and
// finds nothing where one goroutine does all the work. CI runs the short
// suite with the detector on and the whole suite without it, so such a
// test is still run in full once. Tests skip that way through package
// racetest.
package race
