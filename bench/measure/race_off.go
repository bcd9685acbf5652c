//go:build !race

package measure

// raceEnabled: the race detector is off.
const raceEnabled = false
