package storehttp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/store"
)

// FuzzHandler sends the handler arbitrary requests, built from the fuzz
// input, and checks each answer against the contract in doc.go rather
// than only for a panic: the status is the one the route and method call
// for; HEAD gets GET's status and headers and no body; a Content-Length
// is the body's; every answer says Cache-Control: no-store; a page
// carries its Content-Security-Policy and echoes none of the input; the
// JSON parses with its documented fields; a 405 says Allow; the index
// without its slash redirects to it. The handler is the one part of the
// project that reads from a network.
//
// The input is a method, a request target (path and query, sent as the
// request line says them: odd bytes, %-escapes, "..", "//", long names),
// header lines ("Key: value", one a line: Accept, If-None-Match,
// If-Modified-Since and Range, which the handler ignores and must not be
// upset by), a name to Add a store under for the request (kept only if
// Add takes it, which must then be a plain path segment), and a byte
// that picks the handler (snapshots on or off) and where it is mounted:
// called directly, under http.StripPrefix on a ServeMux as doc.go shows,
// or at a mount without its trailing slash. The seed corpus runs as a
// normal test.
//
//	go test -run '^$' -fuzz '^FuzzHandler$' -fuzztime 5m ./store/storehttp
func FuzzHandler(f *testing.F) {
	seeds := []struct {
		method, target, headers, name string
		mount                         uint8
	}{
		// The routes of doc.go, on every store.
		{"GET", "/", "", "", 0},
		{"GET", "/unbounded", "", "", 0},
		{"GET", "/unbounded?refresh=5", "", "", 0},
		{"GET", "/cache.json", "", "", 0},
		{"GET", "/A-z_09", "", "", 3},
		{"GET", "/A-z_09.json", "Accept: application/json", "", 3},
		{"POST", "/cache.snapshot", "Range: bytes=0-10", "", 0},
		{"POST", "/unbounded.snapshot", "", "", 0},
		{"POST", "/cache.snapshot", "", "", 3},
		{"GET", "/cache.snapshot", "", "", 0},
		{"POST", "/cache.snapshot", "Sec-Fetch-Site: cross-site", "", 0},
		{"POST", "/cache.snapshot", "Origin: http://attacker.example", "", 0},
		{"HEAD", "/", "", "", 0},
		{"HEAD", "/cache?refresh=60", "If-None-Match: \"x\"", "", 0},
		{"HEAD", "/cache.json", "If-Modified-Since: Mon, 02 Jan 2006 15:04:05 GMT", "", 0},
		{"HEAD", "/cache.snapshot", "", "", 0},
		{"POST", "/cache", "", "", 0},
		{"OPTIONS", "/", "", "", 0},
		{"DELETE", "/cache.snapshot", "", "", 0},
		{"GET", "/extra", "", "extra", 0},
		{"GET", "/extra.json", "", "extra", 1},
		// Mounted as doc.go shows, and without the trailing slash.
		{"GET", "/", "", "", 1},
		{"GET", "/cache?refresh=10", "", "", 1},
		{"GET", "", "", "", 2},
		{"GET", "?refresh=5", "", "", 2},
		{"HEAD", "/", "", "", 5},
		// ?refresh of every kind.
		{"GET", "/cache?refresh=", "", "", 0},
		{"GET", "/cache?refresh=0", "", "", 0},
		{"GET", "/cache?refresh=3600", "", "", 0},
		{"GET", "/cache?refresh=3601", "", "", 0},
		{"GET", "/cache?refresh=-1", "", "", 0},
		{"GET", "/cache?refresh=+7", "", "", 0},
		{"GET", "/cache?refresh=1.5", "", "", 0},
		{"GET", "/cache?refresh=99999999999999999999", "", "", 0},
		{"GET", "/cache?refresh=%zz", "", "", 0},
		{"GET", "/cache?refresh=5;x=1", "", "", 0},
		{"GET", "/cache?refresh=5&refresh=x", "", "", 0},
		{"GET", "/cache?refresh=x&refresh=5", "", "", 0},
		{"GET", "/cache?re%66resh=2", "", "", 0},
		{"GET", "/?refresh=x", "", "", 0},
		{"GET", "/cache.json?refresh=x", "", "", 0},
		// Hostile paths and names.
		{"GET", "/<script>alert(1)</script>", "", "", 0},
		{"GET", "/%3Cscript%3Ealert(1)%3C%2Fscript%3E", "", "", 1},
		{"GET", "/cache?refresh=<script>", "", "", 0},
		{"GET", "/cache?refresh=%22%3E%3Cscript%3E", "", "", 0},
		{"GET", "/x", "", "<script>", 0},
		{"GET", "/../cache", "", "", 0},
		{"GET", "/../cache", "", "", 1},
		{"GET", "//cache", "", "", 0},
		{"GET", "/cache/", "", "", 0},
		{"GET", "/cache%2Fx", "", "", 1},
		{"GET", "/cache.json.json", "", "", 0},
		{"GET", "/.json", "", "", 0},
		{"GET", "/.snapshot", "", "", 3},
		{"GET", "/%00", "", "", 0},
		{"GET", "/\xff\xfe", "", "", 0},
		{"GET", "/" + strings.Repeat("n", 65), "", strings.Repeat("n", 65), 0},
		{"GET", "/" + strings.Repeat("n", 64), "", strings.Repeat("n", 64), 0},
		{"GET", "/" + strings.Repeat("x", 5000) + ".json", "", "", 0},
		{"GET", "http://example.com/cache", "", "", 0},
		{"GET", "*", "", "", 0},
		{"<script>", "/cache", "", "", 0},
		{"get", "/cache", "", "", 0},
	}
	for _, s := range seeds {
		f.Add(s.method, s.target, s.headers, s.name, s.mount)
	}
	fx := newFuzzFixture(f)
	f.Fuzz(func(t *testing.T, method, target, headers, name string, mount uint8) {
		fx.check(t, method, target, headers, name, mount)
	})
}

// fuzzFixture is what every input is sent to: two handlers, one with
// snapshots and one without, each with the same few small stores, and
// the three ways of mounting each.
type fuzzFixture struct {
	handlers [2]*Handler
	extra    Store // added under the input's name for one request
	// served is the request the handler last got, for the checks: under a
	// ServeMux it is StripPrefix's, and nil when the mux answered itself.
	mu     sync.Mutex
	served *http.Request
}

// The stores' names, and those that can save a snapshot.
var (
	fuzzStores = []string{"unbounded", "cache", "A-z_09"}
	fuzzSavers = []string{"cache", "A-z_09"}
)

func newFuzzFixture(tb testing.TB) *fuzzFixture {
	fx := &fuzzFixture{}
	for i, snaps := range []bool{true, false} {
		// One view for the life of the process: GET and HEAD of a page
		// then show the same bytes, and a request costs a copy.
		h := NewHandler(&Options{MaxAge: time.Hour, Snapshots: snaps})
		// An unbounded store that cannot save (the interface hides Save).
		if err := h.Add("unbounded", struct{ Store }{newStore(tb, store.MapOptions{Seed: 1, SizeHint: 64}, 100)}); err != nil {
			tb.Fatal(err)
		}
		// A cache (bounded, evicting), which can.
		if err := h.Add("cache", newCache(tb, store.CacheOptions[string, int]{Seed: 2, MaxEntries: 64}, 200)); err != nil {
			tb.Fatal(err)
		}
		// Every class of character a name may have; four parts; empty,
		// with no gets, so no fluid limit and a null hit ratio.
		empty, err := store.NewMap[uint64, string](store.MapOptions{Seed: 3, Placement: bucket.GoLeft, Choices: 4})
		if err != nil {
			tb.Fatal(err)
		}
		if err := h.Add("A-z_09", empty); err != nil {
			tb.Fatal(err)
		}
		fx.handlers[i] = h
	}
	fx.extra = newStore(tb, store.MapOptions{Seed: 4}, 10)
	// A name that would need escaping is refused, so no name reaches a
	// page unescaped; the fuzzer tries others.
	for _, bad := range []string{"<script>", `a"b`, "a&b", "a/b", "..", "a%2F"} {
		if err := fx.handlers[0].Add(bad, fx.extra); err == nil {
			tb.Fatalf("Add(%q) took a name that needs escaping", bad)
		}
	}
	return fx
}

// mounts are the ways a handler is served: directly, under a prefix with
// http.StripPrefix on a ServeMux (doc.go's example), and at a prefix
// without its trailing slash, where the index redirects to the slash.
var mounts = []string{"", "/debug/twochoice", "/solo"}

// spy records the request the handler gets.
func (fx *fuzzFixture) spy(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fx.mu.Lock()
		fx.served = r
		fx.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// send serves one request, built from the input, and returns the
// response and the request the handler got (nil if a ServeMux answered
// without calling it).
func (fx *fuzzFixture) send(h *Handler, mount int, method, target, headers string) (*httptest.ResponseRecorder, *http.Request) {
	var root http.Handler = fx.spy(h)
	if prefix := mounts[mount]; prefix != "" {
		mux := http.NewServeMux()
		mux.Handle(prefix, http.StripPrefix(prefix, root))
		mux.Handle(prefix+"/", http.StripPrefix(prefix, root))
		root = mux
		if target == "" || target[0] == '/' || target[0] == '?' {
			target = prefix + target
		}
	}
	r := buildRequest(method, target, headers)
	fx.mu.Lock()
	fx.served = nil
	fx.mu.Unlock()
	rec := httptest.NewRecorder()
	root.ServeHTTP(rec, r)
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return rec, fx.served
}

// buildRequest makes the request a server would read from the request
// line and header lines, as http.ReadRequest parses them. Header lines a
// server would refuse are added by hand, and a request line it would
// refuse is built by hand, with the path as given: a handler may be
// called by code other than a server (a middleware that rewrites the
// path, a test), and must answer that too. Either way the target is read
// the same with the headers or without them.
func buildRequest(method, target, headers string) *http.Request {
	var lines []string
	for _, line := range strings.Split(headers, "\n") {
		if line != "" {
			lines = append(lines, line)
		}
	}
	read := func(lines []string) *http.Request {
		var raw strings.Builder
		fmt.Fprintf(&raw, "%s %s HTTP/1.1\r\nHost: example.com\r\n", method, target)
		for _, line := range lines {
			raw.WriteString(line + "\r\n")
		}
		raw.WriteString("\r\n")
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw.String())))
		if err != nil {
			return nil
		}
		return r
	}
	if r := read(lines); r != nil {
		return r
	}
	r := read(nil)
	if r == nil {
		path, query, _ := strings.Cut(target, "?")
		r = &http.Request{
			Method: method, URL: &url.URL{Path: path, RawQuery: query}, RequestURI: target,
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{}, Host: "example.com",
		}
		r = r.WithContext(context.Background())
	}
	for _, line := range lines {
		k, v, _ := strings.Cut(line, ":")
		r.Header.Add(k, strings.TrimSpace(v))
	}
	return r
}

func (fx *fuzzFixture) check(t *testing.T, method, target, headers, name string, mount uint8) {
	m := int(mount) % len(mounts)
	snaps := mount/uint8(len(mounts))%2 == 0
	h := fx.handlers[0]
	if !snaps {
		h = fx.handlers[1]
	}
	stores := fuzzStores
	savers := fuzzSavers
	if err := h.Add(name, fx.extra); err == nil {
		defer h.Remove(name)
		if checkName(name) != nil || !isPlainName(name) {
			t.Fatalf("Add took %q, which is not a plain path segment", name)
		}
		stores = append(slices.Clone(stores), name)
		savers = append(slices.Clone(savers), name)
	}
	if !snaps {
		savers = nil
	}

	rec, r := fx.send(h, m, method, target, headers)
	if r == nil {
		// The mux answered (a path to clean, or outside the mount);
		// that is net/http's, not the handler's.
		return
	}
	exp := expect(r, stores, savers, snaps)
	where := fmt.Sprintf("%s %q (mount %q, snapshots %v, headers %q; the handler got %s %q?%q)",
		method, target, mounts[m], snaps, headers, r.Method, r.URL.Path, r.URL.RawQuery)
	checkResponse(t, where, rec, r, exp)
	if rec.Code == http.StatusOK && r.Method == http.MethodGet && (exp.route == pageRoute || exp.route == indexRoute) {
		checkEcho(t, where, h, rec.Body.Bytes(), exp)
	}

	// HEAD answers as GET would, with no body, and the headers the
	// handler ignores change nothing.
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		get, _ := fx.send(h, m, http.MethodGet, target, headers)
		head, _ := fx.send(h, m, http.MethodHead, target, headers)
		plain, _ := fx.send(h, m, http.MethodGet, target, "")
		if head.Body.Len() != 0 {
			t.Errorf("%s: HEAD got a body of %d bytes", where, head.Body.Len())
		}
		if plain.Code != get.Code {
			t.Errorf("%s: code %d, and %d without the headers", where, get.Code, plain.Code)
		}
		if exp.route == snapshotRoute && !exp.extra && snaps {
			for _, rec := range []*httptest.ResponseRecorder{get, head} {
				if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "POST" {
					t.Errorf("%s: GET or HEAD of a snapshot got %d, Allow %q; want 405, Allow POST", where, rec.Code, rec.Header().Get("Allow"))
				}
			}
			return
		}
		if head.Code != get.Code {
			t.Errorf("%s: HEAD got code %d, GET %d", where, head.Code, get.Code)
		}
		for k := range mergeKeys(get.Header(), head.Header()) {
			if k == "Server-Timing" { // durations
				continue
			}
			if g, hd := get.Header().Values(k), head.Header().Values(k); !slices.Equal(g, hd) {
				t.Errorf("%s: HEAD got %s %q, GET %q", where, k, hd, g)
			}
		}
	}
}

func mergeKeys(a, b http.Header) map[string]bool {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

func isPlainName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, c := range name {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// expectation is what doc.go promises for a request, worked out from it
// alone (not from the handler's code).
type expectation struct {
	codes   []int // the statuses allowed
	route   route
	name    string
	refresh int    // for a page served with 200
	allow   string // for a 405
	// extra: the path has a second segment, so it names no route,
	// whatever its suffix.
	extra bool
}

// expect reads the request as doc.go describes the routes: the path
// relative to the mount, one segment, NAME, NAME.json or NAME.snapshot;
// GET and HEAD, and POST alone for snapshots, whose route is there only
// with snaps (Options.Snapshots); ?refresh=N on a page.
func expect(r *http.Request, stores, savers []string, snaps bool) expectation {
	rel := strings.TrimPrefix(r.URL.Path, "/")
	e := expectation{name: rel, route: pageRoute, allow: "GET, HEAD"}
	switch {
	case strings.HasSuffix(rel, ".json"):
		e.name, e.route = strings.TrimSuffix(rel, ".json"), jsonRoute
	case strings.HasSuffix(rel, ".snapshot"):
		e.name, e.route, e.allow = strings.TrimSuffix(rel, ".snapshot"), snapshotRoute, "POST"
	case rel == "":
		e.route = indexRoute
	}
	get := r.Method == http.MethodGet || r.Method == http.MethodHead
	if e.route == snapshotRoute {
		get = r.Method == http.MethodPost
	}
	exists := slices.Contains(stores, e.name)
	e.extra = strings.Contains(rel, "/")
	switch {
	case e.route == snapshotRoute && !snaps:
		// No snapshot route at all, whatever the method.
		e.codes = []int{http.StatusNotFound}
	case e.extra:
		// No route has a second segment: not found, whatever the method.
		e.codes = []int{http.StatusNotFound, http.StatusMethodNotAllowed}
		if get {
			e.codes = []int{http.StatusNotFound}
		}
	case !get:
		// The method is checked first (TestErrors); a store that does
		// not exist may be said not to.
		e.codes = []int{http.StatusMethodNotAllowed}
		if e.route != indexRoute && !exists {
			e.codes = append(e.codes, http.StatusNotFound)
		}
	case e.route == indexRoute:
		e.codes = []int{http.StatusOK}
		if r.URL.Path == "" {
			e.codes = append(e.codes, http.StatusMovedPermanently)
		}
	case !exists:
		e.codes = []int{http.StatusNotFound}
		if e.route == pageRoute {
			e.codes = append(e.codes, http.StatusBadRequest) // with a bad ?refresh: either
		}
	case e.route == jsonRoute:
		e.codes = []int{http.StatusOK}
	case e.route == snapshotRoute:
		e.codes = []int{http.StatusNotFound}
		if slices.Contains(savers, e.name) {
			e.codes = []int{http.StatusOK}
			// A POST a browser says came from another site's page
			// (http.CrossOriginProtection reads these two headers).
			if r.Header.Get("Sec-Fetch-Site") != "" || r.Header.Get("Origin") != "" {
				e.codes = append(e.codes, http.StatusForbidden)
			}
		}
	case e.route == pageRoute:
		var ok bool
		e.refresh, ok = refreshOf(r.URL.RawQuery)
		e.codes = []int{http.StatusOK}
		if !ok {
			e.codes = []int{http.StatusBadRequest}
		}
	}
	return e
}

// refreshOf reads ?refresh=N from a raw query as doc.go has it: whole
// seconds, 0 to 3600 (TestRefresh), absent or empty for none; any other
// value of refresh, one that does not decode included, is bad. The first
// of repeated values is the one used, as url.Values.Get has it.
func refreshOf(rawQuery string) (int, bool) {
	n, seen := 0, false
	for pair := range strings.SplitSeq(rawQuery, "&") {
		k, v, _ := strings.Cut(pair, "=")
		if k, err := url.QueryUnescape(k); err != nil || k != "refresh" {
			continue
		}
		v, err := url.QueryUnescape(v)
		if err != nil {
			return 0, false
		}
		if v == "" {
			seen = true // none, as if absent
			continue
		}
		i, err := strconv.Atoi(v)
		if err != nil || i < 0 || i > maxRefresh {
			return 0, false
		}
		if !seen {
			n, seen = i, true
		}
	}
	return n, true
}

// checkResponse checks one response against what doc.go promises.
func checkResponse(t *testing.T, where string, rec *httptest.ResponseRecorder, r *http.Request, exp expectation) {
	t.Helper()
	hd := rec.Header()
	body := rec.Body.Bytes()
	if !slices.Contains(exp.codes, rec.Code) {
		t.Fatalf("%s: code %d, want one of %v; body %.200q", where, rec.Code, exp.codes, body)
	}
	if got := hd.Get("Cache-Control"); got != "no-store" {
		t.Errorf("%s: code %d with Cache-Control %q, want no-store", where, rec.Code, got)
	}
	if cl := hd.Get("Content-Length"); cl != "" && r.Method != http.MethodHead && cl != strconv.Itoa(len(body)) {
		t.Errorf("%s: Content-Length %s for a body of %d bytes", where, cl, len(body))
	}
	if r.Method == http.MethodHead && len(body) != 0 {
		t.Errorf("%s: HEAD got a body of %d bytes", where, len(body))
	}
	if len(body) > 0 && hd.Get("Content-Type") == "" {
		t.Errorf("%s: a body with no Content-Type", where)
	}
	ct := hd.Get("Content-Type")
	if ct != "" && hd.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("%s: %s without X-Content-Type-Options: nosniff", where, ct)
	}
	if strings.HasPrefix(ct, "text/html") {
		checkPage(t, where, hd, body)
	}
	switch rec.Code {
	case http.StatusMethodNotAllowed:
		// RFC 9110 15.5.6: a 405 lists the methods the resource takes.
		if got := hd.Get("Allow"); got != exp.allow {
			t.Errorf("%s: 405 with Allow %q, want %q", where, got, exp.allow)
		}
	case http.StatusMovedPermanently:
		checkRedirect(t, where, hd, r)
	case http.StatusOK:
		if hd.Get("Content-Length") == "" {
			t.Errorf("%s: 200 without a Content-Length", where)
		}
		switch exp.route {
		case indexRoute, pageRoute:
			if !strings.HasPrefix(ct, "text/html") {
				t.Errorf("%s: a page of type %q", where, ct)
			}
			if exp.route == pageRoute && r.Method == http.MethodGet {
				meta := `<meta http-equiv="refresh" content="` + strconv.Itoa(exp.refresh) + `"/>`
				if got := strings.Contains(string(body), `http-equiv="refresh"`); got != (exp.refresh > 0) ||
					exp.refresh > 0 && !strings.Contains(string(body), meta) {
					t.Errorf("%s: the page does not reload every %d s", where, exp.refresh)
				}
			}
		case jsonRoute:
			if ct != "application/json" {
				t.Errorf("%s: JSON of type %q", where, ct)
			}
			if r.Method == http.MethodGet {
				checkJSON(t, where, body, exp.name)
			}
		case snapshotRoute:
			if ct != "application/octet-stream" ||
				!strings.HasPrefix(hd.Get("Content-Disposition"), `attachment; filename="`+exp.name+"-") || len(body) == 0 {
				t.Errorf("%s: snapshot with type %q, disposition %q, %d bytes", where, ct, hd.Get("Content-Disposition"), len(body))
			}
		}
	}
}

// checkPage checks what every page carries.
func checkPage(t *testing.T, where string, hd http.Header, body []byte) {
	t.Helper()
	if got := hd.Get("Content-Security-Policy"); !strings.HasPrefix(got, "default-src 'none'") {
		t.Errorf("%s: a page with Content-Security-Policy %q", where, got)
	}
	if strings.Contains(strings.ToLower(string(body)), "<script") {
		t.Errorf("%s: a page with a script", where)
	}
}

// takenRE matches when a view or the index was taken, which is all that
// differs between two requests for the index.
var takenRE = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC`)

// checkEcho: a page echoes none of its request. The only parts of a
// request a page shows are the store's name, which Add keeps to a plain
// path segment, and ?refresh, read as a number; so whatever the path,
// query and headers, the page is the one a plain request for the same
// store and period gets (the same view: MaxAge is an hour), byte for
// byte, and the index is the plain index but for its time.
func checkEcho(t *testing.T, where string, h *Handler, body []byte, exp expectation) {
	t.Helper()
	target := "/"
	if exp.route == pageRoute {
		target = "/" + exp.name
		if exp.refresh > 0 {
			target += "?refresh=" + strconv.Itoa(exp.refresh)
		}
	}
	want := serve(h, http.MethodGet, target).Body.String()
	got := string(body)
	if exp.route == indexRoute {
		want, got = takenRE.ReplaceAllString(want, "T"), takenRE.ReplaceAllString(got, "T")
	}
	if got != want {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Errorf("%s: the page is not GET %s's: from byte %d it has %.80q, not %.80q", where, target, i, got[i:], want[i:])
	}
}

// checkRedirect: the index without its slash (a handler mounted without
// one) redirects to the same URL with it, keeping the query.
func checkRedirect(t *testing.T, where string, hd http.Header, r *http.Request) {
	t.Helper()
	loc := hd.Get("Location")
	base, err := url.ParseRequestURI(r.RequestURI)
	if err != nil {
		t.Errorf("%s: redirect to %q for an unreadable request URI %q", where, loc, r.RequestURI)
		return
	}
	to, err := base.Parse(loc)
	if err != nil {
		t.Errorf("%s: redirect to %q: %v", where, loc, err)
		return
	}
	// A '#' in the query (which Go's server lets through) goes as %23,
	// which decodes to the same query.
	query := strings.ReplaceAll(r.URL.RawQuery, "#", "%23")
	if to.Path != base.Path+"/" || to.RawQuery != query || to.Host != base.Host || to.Scheme != base.Scheme {
		t.Errorf("%s: redirect to %q, which is %q, not %q with a slash", where, loc, to, base)
	}
}

// jsonFields are the fields doc.go lists for GET /NAME.json, with their
// kinds; "null" where an empty store has none, and for the seed, which
// the fixture's handlers do not show.
var jsonFields = map[string][]string{
	"entries": {"number"}, "buckets": {"number"}, "bucket_size": {"number"}, "placement": {"string"},
	"choices": {"number"}, "hash": {"string"}, "seed": {"null"}, "histogram": {"array"},
	"stash": {"number"}, "max_load": {"number"}, "share_at_least": {"array", "null"},
	"fluid_share_at_least": {"array", "null"}, "fluid_stash": {"number"}, "mean_load": {"number"},
	"utilization": {"number"}, "max_utilization": {"number"}, "parts": {"array", "null"},
	"deletes": {"number"}, "name": {"string"}, "time": {"string"}, "view_ms": {"number"},
	"max_entries": {"number"}, "stats": {"object"},
}

func checkJSON(t *testing.T, where string, body []byte, name string) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Errorf("%s: JSON does not parse: %v", where, err)
		return
	}
	for field, kinds := range jsonFields {
		if v, ok := doc[field]; !ok || !slices.Contains(kinds, jsonKind(v)) {
			t.Errorf("%s: JSON field %q is %v, want a %v", where, field, v, kinds)
		}
	}
	if doc["name"] != name {
		t.Errorf("%s: JSON of %q for %q", where, doc["name"], name)
	}
	if s, _ := doc["time"].(string); s != "" {
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			t.Errorf("%s: time %q: %v", where, s, err)
		}
	}
	stats, _ := doc["stats"].(map[string]any)
	if v, ok := stats["hit_ratio"]; !ok || jsonKind(v) != "number" && jsonKind(v) != "null" {
		t.Errorf("%s: stats.hit_ratio is %v", where, v)
	}
}
