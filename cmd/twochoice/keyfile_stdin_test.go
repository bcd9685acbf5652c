package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// "--keys -" (bench: "--workload keys:-") reads the keys from standard
// input, as Unix tools read "-": every command that reads a key file, with
// the same keys as from the file, and the source called "stdin" in the
// output and the errors. It used to look for a file named "-".
func TestKeysDashIsStdin(t *testing.T) {
	var b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&b, "user:%d\n", i)
	}
	keys := b.String()
	dir := t.TempDir()

	withStdin(t, keys, func() {
		code, out, errOut := runCLI("load", "--keys", "-", "--out", filepath.Join(dir, "k.snap"), "--format", "json", "--quiet")
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); code != 0 || err != nil || m["entries"] != float64(500) {
			t.Errorf("load --keys -: exit %d, stderr %q, %v, entries %v; want 500", code, errOut, err, m["entries"])
		}
	})
	withStdin(t, keys, func() {
		code, out, errOut := runCLI("sim", "--keys", "-", "--rule", "dchoice", "--bins", "64", "--runs", "1", "--format", "json", "--quiet")
		if code != 0 {
			t.Fatalf("sim --keys -: exit %d, stderr %q", code, errOut)
		}
		if row := oneJSONRow(t, out); row["balls"] != float64(500) || row["keys"] != "stdin" {
			t.Errorf("sim --keys -: balls %v, keys %v; want 500 and stdin", row["balls"], row["keys"])
		}
	})
	withStdin(t, keys, func() {
		code, out, errOut := runCLIWithin(t, time.Minute, "bench", "--workload", "keys:-", "--capacity", "10", "--threads", "1", "--caches", "lru", "--duration", "1ms", "--format", "json", "--quiet")
		rows := []map[string]any{}
		if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) == 0 || rows[0]["workload"] != "keys:stdin" {
			t.Errorf("bench --workload keys:-: exit %d, stderr %q, out %.300s", code, errOut, out)
		}
	})
	// An empty stdin is an empty key file, called stdin.
	withStdin(t, "", func() {
		code, _, errOut := runCLI("load", "--keys", "-", "--out", filepath.Join(dir, "e.snap"), "--quiet")
		if code != exitFail || !strings.Contains(errOut, "stdin") || strings.Contains(errOut, " -") {
			t.Errorf("load --keys - on an empty stdin: exit %d, stderr %q", code, errOut)
		}
	})
	// A bad line is stdin's line, as hash says.
	withStdin(t, "a\nb\x00\n", func() {
		code, _, errOut := runCLI("sim", "--keys", "-", "--quiet")
		if code != exitFail || !strings.Contains(errOut, "stdin:2:") {
			t.Errorf("sim --keys - with a NUL byte: exit %d, stderr %q", code, errOut)
		}
	})

	if testing.Short() {
		return // serve starts a server
	}
	page, stop := startServeStdin(t, strings.NewReader(keys), "--keys", "-", "--workload", "none")
	if !strings.HasSuffix(page, "/stdin") {
		t.Errorf("serve --keys -: page %s, want the store named stdin", page)
	}
	resp, err := http.Get(page + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Entries int `json:"entries"`
	}
	err = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if err != nil || doc.Entries != 500 {
		t.Errorf("serve --keys -: %d entries, %v; want 500", doc.Entries, err)
	}
	stop()
}
