//go:build !unix

package snapshot

// removeStale does nothing where flock is not available: temporary files
// of killed saves stay until removed by hand.
func removeStale(string) {}

// finishLocked: Commit closes the temporary file before it renames it
// (see stale_unix.go); with no cleanup of stale files here, no other save
// removes it meanwhile.
const finishLocked = false
