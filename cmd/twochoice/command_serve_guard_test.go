package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// get sends a request for u with Host host ("" for u's own) and returns
// the status and the body.
func get(t *testing.T, method, u, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// serve's page is safe to leave running: by default a request addressed
// to another host than loopback's (a web page reading it through DNS
// rebinding) gets 421 whatever it asks for; there is no snapshot route,
// the page shows no seed and the JSON's is null, and /debug/vars has no
// command line. "curl -H 'Host: attacker.example'
// http://127.0.0.1:8080/keys.snapshot" returned every key and value.
// Each flag turns its part back on.
func TestServeGuards(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers; skipped in -short mode")
	}
	keys := filepath.Join(t.TempDir(), "keys.txt")
	if err := os.WriteFile(keys, []byte("alpha\nbeta\ngamma\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const seed = "918273645"
	page, stop := startServe(t, "--keys", keys, "--workload", "none", "--seed", seed)
	base := strings.TrimSuffix(page, "/keys")
	for _, c := range []struct{ method, path string }{
		{"GET", "/"}, {"GET", "/keys"}, {"GET", "/keys.json"}, {"POST", "/keys.snapshot"}, {"GET", "/debug/vars"},
	} {
		for _, host := range []string{"attacker.example", "attacker.example:8080", "localhost.attacker.example"} {
			code, body := get(t, c.method, base+c.path, host)
			if code != http.StatusMisdirectedRequest || !strings.Contains(body, "not a name this server answers to") || strings.Contains(body, "alpha") {
				t.Errorf("%s %s with Host %s: %d %.100q; want 421 and why", c.method, c.path, host, code, body)
			}
		}
		u, _ := url.Parse(base)
		if code, _ := get(t, c.method, base+c.path, "localhost:"+u.Port()); code == http.StatusMisdirectedRequest {
			t.Errorf("%s %s with Host localhost: 421", c.method, c.path)
		}
	}
	if code, _ := get(t, "POST", page+".snapshot", ""); code != http.StatusNotFound {
		t.Errorf("POST .snapshot without --allow-snapshot: %d, want 404", code)
	}
	if _, html := get(t, "GET", page, ""); strings.Contains(html, ".snapshot") || strings.Contains(html, seed) {
		t.Errorf("the page offers a snapshot or shows the seed without being asked to")
	}
	_, doc := get(t, "GET", page+".json", "")
	_, vars := get(t, "GET", base+"/debug/vars", "")
	checkSeed(t, "JSON", doc, nil)
	checkVars(t, vars, false, nil)
	stop()

	// The flags: a snapshot on POST (not GET), the seed, the command
	// line, and another host name.
	page, stop = startServe(t, "--keys", keys, "--workload", "none", "--seed", seed,
		"--allow-snapshot", "--show-seed", "--expose-cmdline", "--allow-host", "box.lan")
	base = strings.TrimSuffix(page, "/keys")
	if code, body := get(t, "POST", page+".snapshot", ""); code != http.StatusOK || !strings.Contains(body, "alpha") {
		t.Errorf("POST .snapshot with --allow-snapshot: %d, %d bytes", code, len(body))
	}
	if code, _ := get(t, "GET", page+".snapshot", ""); code != http.StatusMethodNotAllowed {
		t.Errorf("GET .snapshot: %d, want 405", code)
	}
	if _, html := get(t, "GET", page, ""); !strings.Contains(html, `<form method="post" action="keys.snapshot">`) || !strings.Contains(html, seed) {
		t.Errorf("the page lacks the snapshot form or the seed")
	}
	if code, _ := get(t, "GET", page, "box.lan:1234"); code != http.StatusOK {
		t.Errorf("Host box.lan with --allow-host box.lan: %d", code)
	}
	_, doc = get(t, "GET", page+".json", "")
	_, vars = get(t, "GET", base+"/debug/vars", "")
	want := float64(918273645)
	checkSeed(t, "JSON with --show-seed", doc, want)
	checkVars(t, vars, true, want)
	stop()
}

// checkSeed checks the "seed" of a store's JSON document.
func checkSeed(t *testing.T, what, doc string, want any) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if v, ok := m["seed"]; !ok || v != want {
		t.Errorf("%s: seed %v (present %v), want %v", what, v, ok, want)
	}
}

// checkVars checks /debug/vars: the command line there or not, and the
// store's seed.
func checkVars(t *testing.T, vars string, cmdline bool, seed any) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(vars), &m); err != nil {
		t.Fatalf("/debug/vars: %v\n%s", err, vars)
	}
	if _, ok := m["cmdline"]; ok != cmdline || strings.Contains(vars, "keys.txt") != cmdline {
		t.Errorf("/debug/vars has the command line: %v, want %v", ok, cmdline)
	}
	if _, ok := m["memstats"]; !ok {
		t.Errorf("/debug/vars lacks expvar's memstats")
	}
	checkSeed(t, "/debug/vars", string(m["twochoice.keys"]), seed)
}
