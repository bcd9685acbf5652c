package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readmeImports are the packages every README example may use without
// importing them: the program built around an example imports them all
// and references each, so an example that uses none of them still builds.
var readmeImports = map[string]string{
	"context":                 "context.Background",
	"fmt":                     "fmt.Sprint",
	"log":                     "log.Fatal",
	"net/http":                "http.StripPrefix",
	"time":                    "time.Second",
	self + "/store":           "store.ErrOptions",
	self + "/store/storehttp": "storehttp.NewHandler",
}

// readmeGiven declares, at package level, what the README's examples
// take as the program's own: a store to show and the mux to show it on,
// a context, and a database for a cache's loader to read.
const readmeGiven = `var (
	sessions *store.Cache[string, []byte]
	mux      = http.NewServeMux()
	ctx      = context.Background()
	db       database
)

type database struct{}

func (database) Lookup(ctx context.Context, k string) ([]byte, error) { return []byte(k), nil }
`

// goBlock matches a fenced Go code block of a Markdown file.
var goBlock = regexp.MustCompile("(?ms)^```go\n(.*?)^```\n")

// readmeExamples returns the Go code blocks of a Markdown text.
func readmeExamples(md string) []string {
	var out []string
	for _, m := range goBlock.FindAllStringSubmatch(md, -1) {
		out = append(out, m[1])
	}
	return out
}

// exampleProgram turns a README example into a program: its leading
// import lines go to the file's imports, the rest into main.
func exampleProgram(example string) string {
	imports := map[string]bool{}
	for p := range readmeImports {
		imports[p] = true
	}
	lines := strings.Split(example, "\n")
	i := 0
	for ; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			continue
		}
		p, ok := strings.CutPrefix(l, "import ")
		if !ok {
			break
		}
		p, _, _ = strings.Cut(p, "//")
		imports[strings.Trim(strings.TrimSpace(p), `"`)] = true
	}
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n")
	paths := make([]string, 0, len(imports))
	for p := range imports {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		fmt.Fprintf(&b, "\t%q\n", p)
	}
	b.WriteString(")\n\n")
	for _, p := range paths {
		if use, ok := readmeImports[p]; ok {
			fmt.Fprintf(&b, "var _ = %s\n", use)
		}
	}
	b.WriteString("\n" + readmeGiven + "\nfunc main() {\n")
	b.WriteString(strings.Join(lines[i:], "\n"))
	b.WriteString("\n}\n")
	return b.String()
}

// The README's examples are read as a user would copy them, so each must
// build as written: TestReadmeExamplesBuild builds every Go code block of
// README.md as the body of a main function, in a module of its own that
// requires this one (as TestConsumerGoSum does).
func TestReadmeExamplesBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command; skipped in -short mode")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	examples := readmeExamples(string(md))
	if len(examples) < 2 {
		t.Fatalf("README.md has %d Go examples, want the Map's and the Cache's at least", len(examples))
	}
	dir := t.TempDir()
	gomod := "module example.com/readme\n\ngo 1.26\n\nrequire " + self + " v0.0.0\n\nreplace " + self + " => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	for i, ex := range examples {
		name := fmt.Sprintf("example%d", i+1)
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "main.go"), []byte(exampleProgram(ex)), 0o644); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, "./"+name)
	}
	for _, args := range [][]string{{"mod", "tidy"}, append([]string{"vet"}, pkgs...)} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s(the examples are README.md's Go blocks in order: example1 is the first)", strings.Join(args, " "), err, out)
		}
	}
}

// The extraction must find the blocks, hoist their imports, and leave the
// other languages' blocks alone.
func TestReadmeExamplesExtract(t *testing.T) {
	md := "text\n\n```sh\ngo test ./...\n```\n\n```go\nimport \"example.com/x\"\n\nx.Do()\n```\n\n```go\nfmt.Println(1)\n```\n"
	ex := readmeExamples(md)
	if len(ex) != 2 {
		t.Fatalf("found %d Go blocks, want 2: %q", len(ex), ex)
	}
	p := exampleProgram(ex[0])
	for _, want := range []string{"\t\"example.com/x\"\n", "func main() {\nx.Do()\n", "var _ = fmt.Sprint\n"} {
		if !strings.Contains(p, want) {
			t.Errorf("program lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, "import \"example.com/x\"") {
		t.Errorf("the example's import stays in main:\n%s", p)
	}
}
