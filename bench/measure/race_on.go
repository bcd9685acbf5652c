//go:build race

package measure

// raceEnabled: the race detector is on, and memory it does not know of
// (offheap.go) must not be used.
const raceEnabled = true
