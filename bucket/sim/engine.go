package sim

import (
	"fmt"

	"github.com/twochoice/twochoice/bucket"
)

// Engine is how a run is simulated.
type Engine uint8

const (
	// Auto picks Levels when it can (OneChoice, DChoice, Halves, GoLeft with
	// uniform candidates) and Array otherwise.
	Auto Engine = iota
	// Levels runs the exact Markov chain on load counts: memory independent
	// of n, n up to 2^40.
	Levels
	// Array keeps every bin: every rule, and key-driven runs; n up to 2^31.
	Array
)

var engineNames = [...]string{Auto: "auto", Levels: "levels", Array: "array"}

// String returns "auto", "levels" or "array".
func (e Engine) String() string {
	if int(e) < len(engineNames) {
		return engineNames[e]
	}
	return fmt.Sprintf("Engine(%d)", uint8(e))
}

// Set implements flag.Value.
func (e *Engine) Set(s string) error {
	for i, name := range engineNames {
		if s == name {
			*e = Engine(i)
			return nil
		}
	}
	return fmt.Errorf("%w: unknown engine %q (want auto, levels or array)", ErrConfig, s)
}

// MarshalText implements encoding.TextMarshaler.
func (e Engine) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// levelsRule reports whether the levels engine can run rule: its candidates
// must be uniform within their part.
func levelsRule(rule bucket.Placement) bool {
	switch rule {
	case bucket.OneChoice, bucket.DChoice, bucket.Halves, bucket.GoLeft:
		return true
	}
	return false
}
