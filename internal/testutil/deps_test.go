package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const self = "github.com/twochoice/twochoice"

// allowedRoots are the modules the library may use, besides the standard
// library and its own module.
var allowedRoots = map[string]string{
	"github.com/cespare/xxhash/v2":       "github.com/cespare/xxhash/v2",
	"go.etcd.io/bbolt":                   "go.etcd.io/bbolt",
	"github.com/hashicorp/go-msgpack/v2": "github.com/hashicorp/go-msgpack/v2/codec",
}

var libraryDirs = []string{"hashfn", "bucket", "store"}

func TestLibraryDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command; skipped in -short mode")
	}
	root := filepath.Join("..", "..")
	var patterns []string
	for _, d := range libraryDirs {
		if files, _ := filepath.Glob(filepath.Join(root, d, "*.go")); len(files) > 0 {
			patterns = append(patterns, "./"+d+"/...")
		}
	}
	// -test: test-only imports of the library count too, so no benchmark
	// peer can sneak into its graph through a _test.go file.
	used := goList(t, root, append([]string{"-deps", "-test"}, patterns...)...)

	allowed := map[string]bool{"": true, self: true}
	for mod, pkg := range allowedRoots {
		allowed[mod] = true
		// What an allowed module needs itself is allowed. A module the
		// library does not use yet may be absent from go.mod; then only its
		// own path is allowed.
		if deps, err := goListErr(root, "-deps", pkg); err == nil {
			for _, m := range deps {
				allowed[m] = true
			}
		}
	}
	if bad := violations(used, allowed); len(bad) > 0 {
		t.Fatalf("library packages depend on modules outside the allowed set: %v", bad)
	}
}

// violations returns the modules in used that are not allowed, sorted and
// without repeats.
func violations(used []string, allowed map[string]bool) []string {
	var bad []string
	for _, m := range used {
		if !allowed[m] && !slices.Contains(bad, m) {
			bad = append(bad, m)
		}
	}
	slices.Sort(bad)
	return bad
}

// The check must be able to fail.
func TestViolationsFindsAPeer(t *testing.T) {
	allowed := map[string]bool{"": true, self: true, "go.etcd.io/bbolt": true}
	got := violations([]string{"", self, "github.com/maypok86/otter/v2", "go.etcd.io/bbolt", "github.com/maypok86/otter/v2"}, allowed)
	if !slices.Equal(got, []string{"github.com/maypok86/otter/v2"}) {
		t.Fatalf("violations = %v", got)
	}
}

func goList(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	mods, err := goListErr(dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return mods
}

func goListErr(dir string, args ...string) ([]string, error) {
	cmd := exec.Command("go", append([]string{"list", "-f", "{{with .Module}}{{.Path}}{{end}}"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		return nil, err
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n"), nil
}

// peers are the competitors' modules, which only bench may use.
var peers = []string{"github.com/maypok86/otter", "github.com/dgraph-io/ristretto", "github.com/hashicorp/golang-lru"}

// TestConsumerGoSum builds a program as a user would: a module of its own
// that imports store, hashfn and bucket (this repository standing in for
// the published module through a replace directive), tidied by the go
// command. Its go.sum must name none of the competitors bench measures:
// the library never makes a user download or compile them (module graph
// pruning keeps bench's requirements out of a consumer's graph).
func TestConsumerGoSum(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command; skipped in -short mode")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/consumer\n\ngo 1.26\n\nrequire " + self + " v0.0.0\n\nreplace " + self + " => " + root + "\n",
		"main.go": `package main

import (
	"fmt"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/store"
)

func main() {
	m, _ := store.NewMap[string, int](store.MapOptions{Placement: bucket.GoLeft, Hash: hashfn.XXHash})
	m.Set("a", 1)
	c, _ := store.NewCache(store.CacheOptions[string, int]{MaxEntries: 100})
	c.Set("b", 2)
	fmt.Println(m.Len(), c.Len())
}
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"mod", "tidy"}, {"build", "-o", os.DevNull, "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	sum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range peers {
		if strings.Contains(string(sum), p) {
			t.Errorf("a consumer's go.sum names %s:\n%s", p, sum)
		}
	}
	if !strings.Contains(string(sum), "github.com/cespare/xxhash/v2") {
		t.Errorf("a consumer's go.sum lacks xxhash, which the library needs:\n%s", sum)
	}
}
