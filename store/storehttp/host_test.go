package storehttp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/store"
)

// LoopbackOnly lets through requests addressed to loopback names and the
// hosts given, and answers every other one 421 itself: a page's own name
// made to resolve to 127.0.0.1 (DNS rebinding) read the whole store, its
// snapshot included, through a server that listened on loopback alone.
func TestLoopbackOnly(t *testing.T) {
	inner := NewHandler(&Options{Snapshots: true})
	inner.Add("s", newStore(t, store.MapOptions{Seed: 4}, 10))
	reached := 0
	h := LoopbackOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		inner.ServeHTTP(w, r)
	}), "192.168.1.5:8080", "Build-Box", "[fd00::7]")
	for _, c := range []struct {
		host string
		ok   bool
	}{
		{"127.0.0.1:8080", true},
		{"127.0.0.1", true},
		{"localhost:8080", true},
		{"LocalHost", true},
		{"[::1]:8080", true},
		{"[::1]", true},
		{"127.0.0.2:9", true},
		{"192.168.1.5:8080", true},
		{"192.168.1.5:9090", false}, // given with a port: that port alone
		{"build-box:3000", true},    // given without one: any port
		{"[fd00::7]:1", true},
		{"attacker.example", false},
		{"attacker.example:8080", false},
		{"localhost.attacker.example:8080", false},
		{"127.0.0.1.attacker.example", false},
		{"192.168.1.6:8080", false},
		{"", false},
	} {
		for _, route := range []string{"/s.json", "/s.snapshot"} {
			method := "GET"
			if strings.HasSuffix(route, ".snapshot") {
				method = "POST"
			}
			r := httptest.NewRequest(method, route, nil)
			r.Host = c.host
			rec := httptest.NewRecorder()
			before := reached
			h.ServeHTTP(rec, r)
			passed := reached > before
			if passed != c.ok {
				t.Errorf("%s %s, Host %q: passed on %v, want %v", method, route, c.host, passed, c.ok)
			}
			if c.ok {
				if rec.Code != 200 {
					t.Errorf("%s %s, Host %q: code %d", method, route, c.host, rec.Code)
				}
				continue
			}
			if rec.Code != http.StatusMisdirectedRequest || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") ||
				!strings.Contains(rec.Body.String(), "not a name this server answers to") || strings.Contains(rec.Body.String(), `"entries"`) {
				t.Errorf("%s %s, Host %q: code %d, %q; want 421 and why", method, route, c.host, rec.Code, rec.Body.String())
			}
		}
	}
}
