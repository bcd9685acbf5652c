//go:build race

package measure

// raceEnabled keeps streams in the Go heap under the race detector, which
// watches only memory it knows.
const raceEnabled = true
