package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

func init() {
	register(command{"version", "print the module version twochoice was built from", runVersion})
}

const versionSynopsis = `version

Prints the version of the module the binary was built from, as the go
command recorded it: a release tag (v0.1.0) for "go install
github.com/twochoice/twochoice/cmd/twochoice@v0.1.0", a pseudo-version
for a build of a checkout, or (devel) with the commit, its time and
whether the checkout had local changes, where the go command records
those; then the Go version and platform.`

func runVersion(args []string, stdout, _ io.Writer) error {
	fs := newFlags("version", versionSynopsis)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	info, _ := debug.ReadBuildInfo()
	_, err := fmt.Fprintln(stdout, versionLine(info))
	return err
}

// versionLine is version's output for the build info of a binary (nil
// when it has none): "twochoice VERSION [(REVISION, TIME[, modified])]
// GOVERSION OS/ARCH".
func versionLine(info *debug.BuildInfo) string {
	version, goVersion := "(devel)", runtime.Version()
	var vcs []string
	if info != nil {
		if info.Main.Version != "" {
			version = info.Main.Version
		}
		if info.GoVersion != "" {
			goVersion = info.GoVersion
		}
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		// A release names its commit already; a devel build says which.
		if version == "(devel)" {
			if rev := settings["vcs.revision"]; rev != "" {
				vcs = append(vcs, rev)
			}
			if t := settings["vcs.time"]; t != "" {
				vcs = append(vcs, t)
			}
			if settings["vcs.modified"] == "true" {
				vcs = append(vcs, "modified")
			}
		}
	}
	line := "twochoice " + version
	if len(vcs) > 0 {
		line += " (" + strings.Join(vcs, ", ") + ")"
	}
	return fmt.Sprintf("%s %s %s/%s", line, goVersion, runtime.GOOS, runtime.GOARCH)
}
