package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/bucket/fluid"
)

// jsonRows decodes out, the --format json of a command that prints one
// element per rule (sim, fluid), per key (hash) or per cache and setting
// (bench), as the array it must be.
func jsonRows(t *testing.T, out string) []map[string]any {
	t.Helper()
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, out)
	}
	return rows
}

// oneJSONRow is jsonRows for a run that prints one element.
func oneJSONRow(t *testing.T, out string) map[string]any {
	t.Helper()
	rows := jsonRows(t, out)
	if len(rows) != 1 {
		t.Fatalf("%d elements, want 1:\n%s", len(rows), out)
	}
	return rows[0]
}

// A command that prints one element per rule (or key, or cache) prints an
// array of them in JSON however many there are, so that a script reads a
// field without testing the shape first.
func TestJSONShapeIsAnArray(t *testing.T) {
	for _, tc := range []struct {
		args []string
		n    int
	}{
		{[]string{"sim", "--rule", "goleft", "--log2", "8", "--runs", "1"}, 1},
		{[]string{"sim", "--rule", "dchoice,goleft", "--log2", "8", "--runs", "1"}, 2},
		{[]string{"fluid", "--rule", "goleft"}, 1},
		{[]string{"fluid", "--rule", "dchoice,goleft"}, 2},
		{[]string{"hash", "k1"}, 1},
		{[]string{"hash", "k1", "k2"}, 2},
	} {
		args := append(tc.args, "--format", "json")
		code, out, errOut := runCLI(args...)
		if code != 0 {
			t.Fatalf("%v: code %d, stderr %q", args, code, errOut)
		}
		var rows []json.RawMessage
		if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != tc.n {
			t.Errorf("%v: want an array of %d, got %d elements (%v):\n%s", args, tc.n, len(rows), err, out)
		}
	}
}

// CSV has the rows and figures the table has.
func TestCSVCarriesTheTable(t *testing.T) {
	one := &simRow{Rule: "one", Bins: 8, ShareAtLeast: []float64{1, 0.6, 0.3, 0.1, 0.02}, fluid: &fluid.Result{ShareAtLeast: []float64{1, 0.63, 0.26, 0.08, 0.019, 0.0037}}}
	two := &simRow{Rule: "goleft", Bins: 8, ShareAtLeast: []float64{1, 0.7, 0.2}, fluid: &fluid.Result{ShareAtLeast: []float64{1, 0.77, 0.22, 0.004}}}
	_, table := simShareRows([]*simRow{one, two}, false)
	_, long := simShareRows([]*simRow{one, two}, true)
	if len(long) != 2*len(table) {
		t.Fatalf("%d CSV rows for a table of %d rows and 2 rules", len(long), len(table))
	}
	// goleft's k = 3: "-" and the limit in the table, 0 and the limit in CSV.
	for _, l := range long {
		if l[0] == "goleft" && l[7] == "3" && (l[8] != "0" || l[9] != "0.004") {
			t.Errorf("goleft k = 3: %q", l)
		}
	}

	code, out, errOut := runCLI("fluid", "--rule", "dchoice,goleft", "--capacity", "4", "--format", "csv")
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := "rule,d,load,k,share_at_least,share_part_0,share_part_1,part_load_0,part_load_1,capacity,overflow,overflow_u_0.70,overflow_u_0.75,overflow_u_0.80,overflow_u_0.85,overflow_u_0.90,overflow_u_0.95"
	if lines[0] != want {
		t.Fatalf("header %q, want %q", lines[0], want)
	}
	_, tableOut, _ := runCLI("fluid", "--rule", "dchoice,goleft", "--capacity", "4")
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if f[9] != "4" || f[16] == "" {
			t.Errorf("row without the overflow figures: %s", l)
		}
		if f[0] == "goleft" && (f[5] == "" || f[7] == "") || f[0] == "dchoice" && f[5] != "" {
			t.Errorf("part columns: %s", l)
		}
		if v, _ := strconv.ParseFloat(f[16], 64); f[3] == "1" && !strings.Contains(tableOut, fmtOverflow(v)) {
			t.Errorf("overflow at u = 0.95 %s not in the table:\n%s", f[16], tableOut)
		}
	}
}
