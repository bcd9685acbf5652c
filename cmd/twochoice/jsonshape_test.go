package main

import (
	"encoding/json"
	"testing"
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
// array of them in JSON however many there are: sim and fluid printed a
// bare object for one rule and an array for several, so a script had to
// test the shape before it could read a field.
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
