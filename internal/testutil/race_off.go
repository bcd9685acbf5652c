//go:build !race

package testutil

// Race is false: the race detector is off.
const Race = false
