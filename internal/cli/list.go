package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrRepeated is wrapped by ParseList's error for a value listed twice.
var ErrRepeated = errors.New("cli: value listed twice")

// A RepeatError is a value listed twice in the list given to a flag.
type RepeatError struct {
	Flag  string // the flag's name, without dashes
	List  string // the list as given
	Item  string // the repeat, as typed
	First string // the value's first item, as typed
}

// Error says which flag and which value, as a usage error's line:
// "--threads 1,2,1: 1 is listed twice".
func (e *RepeatError) Error() string {
	if e.Item == e.First {
		return fmt.Sprintf("--%s %s: %s is listed twice", e.Flag, e.List, e.Item)
	}
	return fmt.Sprintf("--%s %s: %s is %s again", e.Flag, e.List, e.Item, e.First)
}

// Unwrap returns ErrRepeated.
func (e *RepeatError) Unwrap() error { return ErrRepeated }

// ParseList parses s, the comma-separated list given to the flag --name:
// each item, trimmed of spaces, is parsed by parse. A value listed twice
// is a *RepeatError, which names the flag and the value ("--threads
// 1,2,1: 1 is listed twice", or "--capacity 1%,1.0%: 1.0% is 1% again"
// for one value written two ways): a repeat would measure or
// print the same thing twice, or was dropped without a word, and neither
// is what was meant. An item parse refuses is an error that names the flag
// and wraps parse's. Every list flag of the commands is read through
// ParseList, so that all of them treat a repeat the same way.
func ParseList[T comparable](name, s string, parse func(item string) (T, error)) ([]T, error) {
	var (
		values []T
		items  []string // as typed, trimmed, for the errors
	)
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		v, err := parse(item)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", name, err)
		}
		if i := slices.Index(values, v); i >= 0 {
			return nil, &RepeatError{Flag: name, List: s, Item: item, First: items[i]}
		}
		values = append(values, v)
		items = append(items, item)
	}
	return values, nil
}
