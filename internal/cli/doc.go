// Package cli holds the plumbing the twochoice commands share: the
// --format flag and its three writers (an aligned table for people, JSON
// and CSV for scripts), the progress bar drawn on stderr when stderr is a
// terminal, the checks and writes of output files (WritableDir before
// the work, ReplaceFile after it, whole or not at all), and ParseList,
// which reads every comma-separated list flag and refuses a value listed
// twice.
package cli
