//go:build race

package testutil

// Race is true: the race detector is on.
const Race = true
