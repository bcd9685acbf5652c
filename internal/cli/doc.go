// Package cli holds the plumbing the twochoice commands share: the
// --format flag and its three writers (an aligned table for people, JSON
// and CSV for scripts), and the progress bar drawn on stderr when stderr is
// a terminal.
package cli
