package main

import "context"

// untilDone runs f on a goroutine of its own and returns what it returns,
// or ctx's error as soon as ctx is done, whichever comes first. It is for
// work that takes no context and may block for long (opening a large
// snapshot, reading a pipe that sends nothing), which a Ctrl-C should not
// wait for: f is left running, and ends with the process, which exits on
// the error. f must not touch what the caller uses after an early return;
// what f builds comes back as its result, which an early return drops.
func untilDone[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	c := make(chan result, 1) // f's goroutine never blocks, even when left
	go func() {
		v, err := f()
		c <- result{v, err}
	}()
	select {
	case r := <-c:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
