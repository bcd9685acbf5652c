//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Ctrl-C while serve reads its keys stops it as it stops the other
// commands' long work: "twochoice serve: interrupted", exit status 1,
// from the moment it starts reading, not only once it serves. The keys
// come through a named pipe that the test
// fills without end, so the read cannot finish by itself: serve is
// reading when it is signalled (it has opened the pipe), and only the
// signal can stop it. No timing is guessed.
func TestServeInterruptedReading(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command as a process of its own")
	}
	interruptReadingKeys(t, "serve", "--addr", "127.0.0.1:0", "--quiet")
}

// TestSimInterruptedReading is the same for sim --keys FILE: a Ctrl-C
// while it reads the file says "interrupted" (it once came before sim
// caught the signal, which then killed it silently).
func TestSimInterruptedReading(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command as a process of its own")
	}
	interruptReadingKeys(t, "sim", "--log2", "12", "--quiet")
}

// TestInterruptedSilentPipe: Ctrl-C while a command waits on a named pipe
// whose writer sends nothing. The read blocks in the kernel, so a command
// that checks for the signal only between keys never hears it; and since
// it handles the signal, the signal does not end it either: before
// scanKeyFile read on a goroutine of its own, it sat there until killed
// ("still running 30 s after Ctrl-C").
func TestInterruptedSilentPipe(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command as a process of its own")
	}
	for _, c := range [][]string{
		{"load", "--out", filepath.Join(t.TempDir(), "s.db"), "--quiet"},
		{"serve", "--addr", "127.0.0.1:0", "--quiet"},
		{"sim", "--log2", "12", "--quiet"},
	} {
		fifo := filepath.Join(t.TempDir(), "keys.txt")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		args := append([]string{c[0], "--keys", fifo}, c[1:]...)
		interruptCommand(t, "Ctrl-C while "+c[0]+" waits on a silent pipe", args, holdOpen(t, fifo))
	}
}

// interruptReadingKeys runs command with --keys on a named pipe that
// feedKeys fills without end, and the flags, and signals it while it reads.
func interruptReadingKeys(t *testing.T, command string, flags ...string) {
	fifo := filepath.Join(t.TempDir(), "keys.txt")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{command, "--keys", fifo}, flags...)
	interruptCommand(t, "Ctrl-C while "+command+" reads its keys", args, feedKeys(t, fifo))
}

// holdOpen is a ready function for interruptCommand: it returns once the
// command has opened the named pipe fifo for reading, and keeps the pipe's
// writing end open, sending nothing, until the test ends.
func holdOpen(t *testing.T, fifo string) func(done <-chan error) {
	return func(done <-chan error) {
		f := openWriter(t, fifo, done)
		t.Cleanup(func() { f.Close() })
	}
}

// feedKeys is a ready function for interruptCommand: it returns once the
// command has opened the named pipe fifo for reading, and leaves a
// goroutine writing keys into it until the command closes its end.
func feedKeys(t *testing.T, fifo string) func(done <-chan error) {
	return func(done <-chan error) {
		f := openWriter(t, fifo, done)
		go func() {
			defer f.Close()
			var b []byte
			for i := 0; ; i++ {
				b = b[:0]
				for j := range 1000 {
					b = fmt.Appendf(b, "key-%d-%d\n", i, j)
				}
				// EPIPE once the command has exited and closed its end.
				if _, err := f.Write(b); err != nil {
					return
				}
			}
		}()
	}
}

// openWriter opens the named pipe fifo for writing once the command, whose
// end done reports, has opened it for reading.
func openWriter(t *testing.T, fifo string, done <-chan error) *os.File {
	for {
		// Opening a pipe for writing without blocking fails with ENXIO
		// until a reader has it open.
		f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			return f
		}
		if !errors.Is(err, syscall.ENXIO) {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Fatalf("the command ended before it opened its key file: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
}
