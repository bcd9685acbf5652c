package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/twochoice/twochoice/bench/workload"
)

// scanKeyFile reads the key file at path as every command reads one
// (workload.ScanKeyFile) and calls fn with each key and its line number,
// for a command that Ctrl-C may stop: once ctx is done it returns ctx's
// error, which interrupted turns into "interrupted". A file without a key
// is an ErrEmpty error, as to workload.ReadKeyFile: a store of nothing is
// most likely made from the wrong file. load, serve and sim read their
// keys through it. The path "-" (workload.StdinPath) is standard input,
// called "stdin" in errors.
//
// The file is read on a goroutine of its own (untilDone), so that Ctrl-C
// is heard even while a read blocks: on a pipe or a named pipe whose
// writer sends nothing (or, for a named pipe, has not opened it yet, which
// blocks the open itself), a read waits for data that may never come, and
// the signal handler, which the command installed, keeps the signal from
// ending the process. A mutex makes the hand-over clean: fn and progress
// run under it, and once scanKeyFile has returned they are not called
// again, so the caller may use what fn built (or print over the progress
// bar) without racing with the reader.
func scanKeyFile(ctx context.Context, path string, progress func(frac float64), fn func(line int, key []byte)) error {
	var (
		mu      sync.Mutex
		stopped bool
	)
	// locked runs f under mu unless scanKeyFile has returned.
	locked := func(f func()) bool {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return false
		}
		f()
		return true
	}
	var report func(frac float64)
	if progress != nil {
		report = func(frac float64) { locked(func() { progress(frac) }) }
	}
	n, err := untilDone(ctx, func() (int, error) {
		n := 0
		err := workload.ScanKeyFile(path, report, func(line int, key []byte) error {
			if !locked(func() { fn(line, key) }) {
				return context.Canceled
			}
			n++
			return nil
		})
		return n, err
	})
	// From here on fn and progress are not called: the reader, if it was
	// left running, stops at its next key.
	mu.Lock()
	stopped = true
	mu.Unlock()
	if err == nil && n == 0 {
		err = fmt.Errorf("%w: %s", workload.ErrEmpty, workload.InputName(path))
	}
	return err
}

// readKeyFile is scanKeyFile collecting the keys, as workload.ReadKeyFile
// does for commands that Ctrl-C need not stop: serve and sim read their
// keys through it.
func readKeyFile(ctx context.Context, path string, progress func(frac float64)) ([]string, error) {
	var keys []string
	err := scanKeyFile(ctx, path, progress, func(_ int, key []byte) { keys = append(keys, string(key)) })
	return keys, err
}
