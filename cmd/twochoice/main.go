// Command twochoice simulates balanced allocations, benchmarks caches on real
// keys, and builds and inspects twochoice stores. Run "twochoice --help" for
// the commands and "twochoice COMMAND --help" for each one's flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/twochoice/twochoice/internal/plot"
)

// A command is one verb of the tool; each lives in command_<verb>.go.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

// commands is filled by the init functions of the command files.
var commands []command

func register(c command) { commands = append(commands, c) }

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// Exit statuses: 0 success, 1 the work failed, 2 the command line was wrong.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// errUsage marks an error in the command line itself.
var errUsage = errors.New("usage")

// errInterrupted is a run stopped by Ctrl-C: every command prints it as
// "twochoice CMD: interrupted" and exits 1.
var errInterrupted = errors.New("interrupted")

// interrupted turns err into errInterrupted when it is the run giving up
// on Ctrl-C ("measure: timed run of map (...): context canceled").
func interrupted(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return errInterrupted
	}
	return err
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		return helped(usage(stdout), "twochoice", stderr)
	case "-version", "--version":
		// As most tools take it: "twochoice version".
		return run(append([]string{"version"}, args[1:]...), stdout, stderr)
	case "help":
		// "twochoice help CMD" is "twochoice CMD --help".
		switch {
		case len(args) > 2:
			fmt.Fprintf(stderr, "twochoice help: unexpected argument %q (help takes one command)\nrun 'twochoice --help' for the commands\n", args[2])
			return exitUsage
		case len(args) > 1:
			return run([]string{args[1], "--help"}, stdout, stderr)
		}
		return helped(usage(stdout), "twochoice", stderr)
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		err := c.run(args[1:], stdout, stderr)
		var help *helpError
		switch {
		case err == nil:
			return exitOK
		case errors.As(err, &help):
			// Asked for: to stdout, so that "twochoice sim --help | less"
			// shows it.
			_, err := fmt.Fprint(stdout, help.text)
			return helped(err, "twochoice "+c.name, stderr)
		case errors.Is(err, errUsage):
			fmt.Fprintf(stderr, "twochoice %s: %v\nrun 'twochoice %s --help' for usage\n", c.name, err, c.name)
			return exitUsage
		default:
			fmt.Fprintf(stderr, "twochoice %s: %v\n", c.name, err)
			return exitFail
		}
	}
	// One line and where to look, as for a command's bad flag: the list
	// of commands would bury the error under 18 lines.
	fmt.Fprintf(stderr, "twochoice: unknown command %q\nrun 'twochoice --help' for the commands\n", args[0])
	return exitUsage
}

// usage prints the list of commands; its error is the first write's.
func usage(w io.Writer) error {
	var b strings.Builder
	fmt.Fprint(&b, "twochoice: balanced-allocation hashing, simulated, benchmarked and inspected.\n\n")
	fmt.Fprint(&b, "Usage:\n\n\ttwochoice COMMAND [flags]\n\nCommands:\n\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "\t%-8s %s\n", c.name, c.summary)
	}
	fmt.Fprint(&b, "\nRun \"twochoice COMMAND --help\" for a command's flags.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// helped is the exit status of printing help that was asked for: 0, or 1
// when it could not be written (a full disk, a closed pipe).
func helped(err error, who string, stderr io.Writer) int {
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", who, err)
		return exitFail
	}
	return exitOK
}

// newFlags returns a flag set that reports errors instead of exiting and
// printing: parseFlags turns them into a help text or a usage error, and
// run prints those (the help to stdout, an error as one line to stderr,
// not followed by every flag).
func newFlags(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: twochoice %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// helpError carries a command's help, asked for with -h or --help; it
// wraps flag.ErrHelp.
type helpError struct{ text string }

func (e *helpError) Error() string { return "help requested" }
func (e *helpError) Unwrap() error { return flag.ErrHelp }

// parseFlags parses args, and wraps a bad flag, or an empty value for a
// string flag, as a usage error.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			var b strings.Builder
			fs.SetOutput(&b)
			fs.Usage()
			fs.SetOutput(io.Discard)
			return &helpError{b.String()}
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	// An empty value given for a string flag ("--sweep ''", "--keys $UNSET")
	// would read as the flag not given, and run the default silently.
	var empty error
	fs.Visit(func(f *flag.Flag) {
		if g, ok := f.Value.(flag.Getter); ok && empty == nil && g.Get() == "" {
			empty = fmt.Errorf("%w: --%s: an empty value", errUsage, f.Name)
		}
	})
	return empty
}

// flagsGiven returns the names of the flags given on the command line, as
// opposed to left at their defaults.
func flagsGiven(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// printThenPlot prints the results with print, then writes the chart
// that chart draws to path if a chart was asked for (path not empty). A
// chart that cannot be written (its disk filled up during the run) fails
// the command, but does not take the results with it, which may have taken
// hours. A failed print does not keep the chart from being written
// either.
func printThenPlot(print func() error, path string, chart func() *plot.Chart) error {
	err := print()
	if path == "" {
		return err
	}
	if perr := chart().WriteFile(path); perr != nil {
		if err != nil {
			return fmt.Errorf("%w (and %w)", err, perr)
		}
		return perr
	}
	return err
}

// checkPlot checks a --plot file before the work it charts: a wrong
// extension or a missing directory found only afterwards would throw the
// results away.
func checkPlot(path string) error {
	if path == "" {
		return nil
	}
	if err := plot.CheckFile(path); err != nil {
		return fmt.Errorf("%w: --plot: %v", errUsage, err)
	}
	return nil
}
