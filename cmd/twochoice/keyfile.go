package main

import (
	"context"
	"fmt"

	"github.com/twochoice/twochoice/bench/workload"
)

// scanKeyFile reads the key file at path as every command reads one
// (workload.ScanKeyFile) and calls fn with each key and its line number,
// for a command that Ctrl-C may stop: once ctx is done it returns ctx's
// error before the next key, which interrupted turns into "interrupted".
// A file without a key is an ErrEmpty error, as to workload.ReadKeyFile:
// a store of nothing is most likely made from the wrong file. load and
// serve read their keys through it.
func scanKeyFile(ctx context.Context, path string, progress func(frac float64), fn func(line int, key []byte)) error {
	done := ctx.Done()
	n := 0
	err := workload.ScanKeyFile(path, progress, func(line int, key []byte) error {
		select {
		case <-done:
			return ctx.Err()
		default:
		}
		fn(line, key)
		n++
		return nil
	})
	if err == nil && n == 0 {
		err = fmt.Errorf("%w: %s", workload.ErrEmpty, path)
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
