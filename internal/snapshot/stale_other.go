//go:build !unix

package snapshot

// removeStale does nothing where flock is not available: temporary files
// of killed saves stay until removed by hand.
func removeStale(string) {}
