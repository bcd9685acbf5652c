package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestFluidCommand(t *testing.T) {
	code, out, errOut := runCLI("fluid", "--rule", "dchoice,goleft")
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"0.761594", "0.229505", "6.0473e-06", "1.3346e-12", "0.771675", "5.1524e-08", "1.2229e-21", "61.12%", "<1e-300"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// go-left's s_8 is under the solver's floor: not a 0 in the table.
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "8" && slices.Contains(f, "0") {
			t.Errorf("a share under the floor printed as 0: %q", line)
		}
	}
	code, out, _ = runCLI("fluid", "--rule", "goleft", "--d", "2", "--load", "1", "--format", "json", "--quiet")
	if code != 0 {
		t.Fatalf("json: code %d", code)
	}
	obj := oneJSONRow(t, out)
	for _, k := range []string{"rule", "d", "load", "share_at_least"} {
		if _, ok := obj[k]; !ok {
			t.Errorf("json lacks %q", k)
		}
	}
	s := obj["share_at_least"].([]any)
	// Down to the last share over 1e-300: s_7 ≈ 7.2e-154, and s_8 would
	// be near 1e-400.
	if last := s[len(s)-1].(float64); len(s) != 8 || last < 1e-300 || last > 1e-150 {
		t.Errorf("%d shares ending at %g, want 8 ending near 7.2e-154", len(s), last)
	}
	code, out, _ = runCLI("fluid", "--rule", "one,dchoice,goleft", "--capacity", "8")
	if code != 0 || !strings.Contains(out, "u = 0.95") || !strings.Contains(out, "0.120") || !strings.Contains(out, "0.0068") {
		t.Fatalf("capacity table, code %d:\n%s", code, out)
	}
	code, out, _ = runCLI("fluid", "--format", "csv")
	if code != 0 || !strings.HasPrefix(out, "rule,d,load,k,share_at_least\ndchoice,2,1,0,1\n") {
		t.Fatalf("csv, code %d:\n%s", code, out)
	}
	png := filepath.Join(t.TempDir(), "f.png")
	if code, _, errOut := runCLI("fluid", "--rule", "dchoice,goleft", "--plot", png); code != 0 {
		t.Fatalf("plot: %d %q", code, errOut)
	}
	if fi, err := os.Stat(png); err != nil || fi.Size() == 0 {
		t.Fatalf("png: %v", err)
	}
	for _, args := range [][]string{{"--rule", "x"}, {"--load", "0"}, {"--capacity", "-1"}, {"--d", "0"}, {"extra"}} {
		if code, _, _ := runCLI(append([]string{"fluid"}, args...)...); code != exitUsage {
			t.Errorf("fluid %v: code %d", args, code)
		}
	}
}

// A capacity whose sizing table would solve past fluid.MaxLoad is refused
// in terms of --capacity, the flag given, not of a load the user never
// typed ("load 1900 is above 1024" for --load 1 --capacity 2000).
func TestFluidCapacityPastMaxLoad(t *testing.T) {
	code, _, errOut := runCLI("fluid", "--capacity", "2000")
	if code != exitUsage || !strings.Contains(errOut, "--capacity 2000") {
		t.Errorf("code %d, stderr %q", code, errOut)
	}
}
