package hashfn

import (
	"os/exec"
	"strings"
	"testing"
)

// The hot wrappers must stay inlinable, and xxh64 must stay a leaf: the
// speed figures of docs/performance.md depend on both. This asks the
// compiler.
func TestInlining(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler; skipped in -short mode")
	}
	out, err := exec.Command("go", "build", "-gcflags=-m", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	for _, fn := range []string{"XXH.Bytes", "XXH.String", "XXH.Uint64", "(*Tab).Uint64", "Reduce", "Mix", "Extend", "stringBytes"} {
		if !strings.Contains(string(out), "can inline "+fn+"\n") && !strings.Contains(string(out), "can inline "+fn+" ") {
			t.Errorf("%s is no longer inlinable", fn)
		}
	}
	dis, err := exec.Command("go", "build", "-gcflags=-S", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-S: %v", err)
	}
	for _, line := range strings.Split(string(dis), "\n") {
		if strings.Contains(line, "hashfn.xxh64 STEXT") && !strings.Contains(line, "size=") {
			continue
		}
		if strings.Contains(line, "hashfn.xxh64 STEXT") && !strings.Contains(line, "locals=0x0") {
			t.Errorf("xxh64 has a stack frame now: %s", line)
		}
	}
}
