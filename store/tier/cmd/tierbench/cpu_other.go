//go:build !unix

package main

import "time"

// cpuTime is not measured here: the hit-cost phase reports wall time.
func cpuTime() (time.Duration, bool) { return 0, false }
