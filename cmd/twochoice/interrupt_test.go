package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// interruptCommand runs the command args as a process of its own, lets
// ready return when the run is far enough along (it gets the channel the
// process's exit arrives on, to fail early), sends it Ctrl-C, and requires
// what every command does then: exit status 1 within 30 s, nothing on
// stdout and one line on stderr, "twochoice CMD: interrupted". label
// names the case in failures.
func interruptCommand(t *testing.T, label string, args []string, ready func(done <-chan error)) {
	t.Helper()
	// A Ctrl-C that comes before the command has installed its handler
	// kills it, as it would any program; on a loaded machine the start
	// can take longer than ready waits. Such a run proves nothing either
	// way, so it is tried again (waitFor waits longer each time); a
	// command that never catches the signal still fails below.
	for attempt := 1; ; attempt++ {
		stdout, stderr, err := interruptOnce(t, label, args, ready)
		var ee *exec.ExitError
		if errors.As(err, &ee) && attempt < 3 {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGINT {
				t.Logf("%s: killed by the signal before catching it (attempt %d); again", label, attempt)
				continue
			}
		}
		if !errors.As(err, &ee) || ee.ExitCode() != exitFail {
			t.Errorf("%s: %v, want exit status %d", label, err, exitFail)
		}
		if got, want := stderr, "twochoice "+args[0]+": interrupted\n"; got != want || stdout != "" {
			t.Errorf("%s: stdout %q, stderr %q, want %q", label, stdout, got, want)
		}
		return
	}
}

// interruptOnce runs the command, sends it Ctrl-C once ready returns, and
// returns its output and how it ended.
func interruptOnce(t *testing.T, label string, args []string, ready func(done <-chan error)) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCommand+"=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	ready(done)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%s: still running 30 s after Ctrl-C", label)
	}
	return out.String(), errOut.String(), err
}

// waitFor is a ready function for interruptCommand: it waits d, and
// twice as long at each retry.
func waitFor(d time.Duration) func(<-chan error) {
	return func(<-chan error) {
		time.Sleep(d)
		d *= 2
	}
}
