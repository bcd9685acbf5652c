//go:build race

package hitratio

// raceEnabled reports whether the race detector is on, which slows
// replays tenfold.
const raceEnabled = true
