package storehttp

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/store"
)

// newStore returns a map of n string keys, with a few hits and misses
// counted.
func newStore(t testing.TB, o store.MapOptions, n int) *store.Map[string, int] {
	t.Helper()
	s, err := store.NewMap[string, int](o)
	if err != nil {
		t.Fatal(err)
	}
	fill(s, n)
	return s
}

// newCache returns a cache of n string keys (of which it keeps at most
// its bound), with a few hits and misses counted.
func newCache(t testing.TB, o store.CacheOptions[string, int], n int) *store.Cache[string, int] {
	t.Helper()
	s, err := store.NewCache[string, int](o)
	if err != nil {
		t.Fatal(err)
	}
	fill(s, n)
	return s
}

// fill sets n keys and counts a few hits and misses.
func fill(s interface {
	Set(string, int)
	Get(string) (int, bool)
}, n int) {
	for i := range n {
		s.Set("key:"+strconv.Itoa(i), i)
	}
	for i := range 10 {
		s.Get("key:" + strconv.Itoa(i*2)) // hits while i*2 < n
		s.Get("absent:" + strconv.Itoa(i))
	}
}

func serve(h http.Handler, method, target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec
}

// element is a parsed XML element: enough of a DOM for the checks.
type element struct {
	name     string
	attr     map[string]string
	children []*element
	text     strings.Builder // all text inside, children's included
}

// parsePage parses a page as XML: the pages are written to be well-formed
// XML as well as HTML5, and any unclosed or mismatched tag, bad attribute
// or unknown entity fails the test.
func parsePage(t *testing.T, body string) *element {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(body))
	d.Strict = true
	root := &element{name: "#document"}
	stack := []*element{root}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("page is not well-formed: %v\n%s", err, body)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := &element{name: tok.Name.Local, attr: map[string]string{}}
			for _, a := range tok.Attr {
				e.attr[a.Name.Local] = a.Value
			}
			top := stack[len(stack)-1]
			top.children = append(top.children, e)
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			for _, e := range stack {
				e.text.Write(tok)
			}
		}
	}
	if len(stack) != 1 {
		t.Fatalf("%d elements left open", len(stack)-1)
	}
	return root
}

// find returns the elements under e (e included) that match.
func (e *element) find(match func(*element) bool) []*element {
	var out []*element
	if match(e) {
		out = append(out, e)
	}
	for _, c := range e.children {
		out = append(out, c.find(match)...)
	}
	return out
}

func (e *element) byID(t *testing.T, id string) *element {
	t.Helper()
	found := e.find(func(x *element) bool { return x.attr["id"] == id })
	if len(found) != 1 {
		t.Fatalf("%d elements with id %q, want 1", len(found), id)
	}
	return found[0]
}

func byName(name string) func(*element) bool {
	return func(x *element) bool { return x.name == name }
}

var placements = []struct {
	rule bucket.Placement
	d    int
}{
	{bucket.OneChoice, 1}, {bucket.DChoice, 2}, {bucket.Halves, 2}, {bucket.GoLeft, 2}, {bucket.GoLeft, 4}, {bucket.DoubleHash, 3},
}

var tipRE = regexp.MustCompile(`^load (\d+): ([0-9,]+) buckets`)

// The page of every rule is well-formed, shows the configuration, and
// draws the store's own histogram (each observed bar's hover text carries
// its count, which must be the report's) and one chart per part.
func TestPage(t *testing.T) {
	for _, pc := range placements {
		t.Run(fmt.Sprintf("%s-d%d", pc.rule, pc.d), func(t *testing.T) {
			o := store.MapOptions{Placement: pc.rule, Choices: pc.d, BucketSize: 6, Hash: hashfn.Tabulation, Seed: 99}
			s := newStore(t, o, 5000)
			h := NewHandler(&Options{ShowSeed: true})
			if err := h.Add("main", s); err != nil {
				t.Fatal(err)
			}
			rec := serve(h, "GET", "/main")
			if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
				t.Fatalf("code %d, type %q", rec.Code, rec.Header().Get("Content-Type"))
			}
			doc := parsePage(t, rec.Body.String())
			rep := s.Report()

			config := doc.byID(t, "configuration").text.String()
			for _, want := range []string{pc.rule.String(), strconv.Itoa(pc.d), "6", "tabulation", "99", count(uint64(rep.Buckets)) + " buckets"} {
				if !strings.Contains(config, want) {
					t.Errorf("configuration lacks %q: %s", want, config)
				}
			}
			traffic := doc.byID(t, "traffic").text.String()
			for _, want := range []string{"gets", "20", "hits", "10", "misses", "hit ratio", "50.0%", "sets", "5,000", "growths"} {
				if !strings.Contains(traffic, want) {
					t.Errorf("traffic lacks %q: %s", want, traffic)
				}
			}

			hist := doc.byID(t, "histogram")
			svgs := hist.find(byName("svg"))
			if len(svgs) != 1 {
				t.Fatalf("%d svg in #histogram", len(svgs))
			}
			got := make([]uint64, o.BucketSize+1)
			seen := 0
			for _, title := range hist.find(byName("title")) {
				m := tipRE.FindStringSubmatch(title.text.String())
				if m == nil {
					continue
				}
				k, _ := strconv.Atoi(m[1])
				n, _ := strconv.ParseUint(strings.ReplaceAll(m[2], ",", ""), 10, 64)
				got[k] = n
				seen++
			}
			if seen != o.BucketSize+1 || !slices.Equal(got, rep.Histogram) {
				t.Errorf("bars show %v (%d bars), report has %v", got, seen, rep.Histogram)
			}
			if n := len(doc.byID(t, "tail").find(byName("circle"))); n == 0 {
				t.Error("tail chart has no observed points")
			}
			parts := doc.find(func(e *element) bool { return e.attr["class"] == "part" })
			if want := len(rep.Parts); want > 1 && len(parts) != want || want == 1 && len(parts) != 0 {
				t.Errorf("%d part charts for %d parts", len(parts), len(rep.Parts))
			}
			rows := doc.byID(t, "table").find(byName("tr"))
			if len(rows) != o.BucketSize+2 { // header and loads 0 … C
				t.Errorf("loads table has %d rows", len(rows))
			}
			if len(doc.find(func(e *element) bool { return e.name == "script" || e.name == "img" || e.name == "link" })) > 0 {
				t.Error("the page loads or runs something")
			}
		})
	}
}

// An empty store has a page too: no fluid limit to draw, and no hit ratio.
func TestPageEmptyStore(t *testing.T) {
	s, _ := store.NewMap[int, int](store.MapOptions{Seed: 1})
	h := NewHandler(nil)
	h.Add("empty", s)
	rec := serve(h, "GET", "/empty")
	if rec.Code != 200 {
		t.Fatalf("code %d", rec.Code)
	}
	doc := parsePage(t, rec.Body.String())
	if !strings.Contains(doc.byID(t, "traffic").text.String(), "no gets yet") {
		t.Error("hit ratio of a store with no gets")
	}
	if len(doc.byID(t, "histogram").find(byName("svg"))) != 1 {
		t.Error("no histogram")
	}
}

func TestRefresh(t *testing.T) {
	h := NewHandler(nil)
	h.Add("s", newStore(t, store.MapOptions{Seed: 1}, 100))
	body := serve(h, "GET", "/s?refresh=5").Body.String()
	doc := parsePage(t, body)
	metas := doc.find(func(e *element) bool { return e.name == "meta" && e.attr["http-equiv"] == "refresh" })
	if len(metas) != 1 || metas[0].attr["content"] != "5" {
		t.Fatalf("refresh meta: %v", metas)
	}
	on := doc.find(func(e *element) bool { return e.name == "a" && e.attr["class"] == "on" })
	if len(on) != 1 || on[0].attr["href"] != "s?refresh=5" {
		t.Fatalf("highlighted refresh link: %v", on)
	}
	if strings.Contains(serve(h, "GET", "/s").Body.String(), `http-equiv="refresh"`) {
		t.Error("refresh without asking")
	}
	for _, bad := range []string{"x", "-1", "3601", "1.5"} {
		if rec := serve(h, "GET", "/s?refresh="+bad); rec.Code != http.StatusBadRequest {
			t.Errorf("refresh=%s: code %d", bad, rec.Code)
		}
	}
}

// A refresh that does not decode, or a bad one among several, is a bad
// refresh (400), as doc.go says: r.URL.Query() drops the pairs it cannot
// decode, so on its word "refresh=%zz" and "refresh=5;x=1" would get 200
// and a page with no refresh, and "refresh=5&refresh=x" a page that
// reloads every 5 s.
func TestRefreshUndecodable(t *testing.T) {
	h := NewHandler(nil)
	h.Add("s", newStore(t, store.MapOptions{Seed: 1}, 100))
	for _, q := range []string{"refresh=%zz", "refresh=5;x=1", "refresh=5&refresh=x", "x=1&refresh=%", "re%66resh=x"} {
		if rec := serve(h, "GET", "/s?"+q); rec.Code != http.StatusBadRequest {
			t.Errorf("?%s: code %d, want 400", q, rec.Code)
		}
	}
	// Pairs that are not refresh are none of the page's business, even
	// undecodable; an empty refresh is none; the first of two is used.
	for q, want := range map[string]string{"x=%zz&refresh=2": "2", "x=1;y=2": "", "refresh=": "", "refresh=2&refresh=30": "2", "refresh=&refresh=3": ""} {
		rec := serve(h, "GET", "/s?"+q)
		got := ""
		if m := regexp.MustCompile(`http-equiv="refresh" content="(\d+)"`).FindStringSubmatch(rec.Body.String()); m != nil {
			got = m[1]
		}
		if rec.Code != 200 || got != want {
			t.Errorf("?%s: code %d, refresh %q; want 200, %q", q, rec.Code, got, want)
		}
	}
}

// A view keeps the pages of the refresh periods the page offers, and
// no others: it kept one per ?refresh value asked for, so a client that
// walked ?refresh=0 to 3600 made one view hold 3601 pages (200 MB for
// a store of 100,000 keys under go-left with d = 4) for as long as it
// was shown. A period not offered is drawn for its request, and right.
func TestRefreshPagesKept(t *testing.T) {
	h := NewHandler(&Options{MaxAge: time.Hour})
	h.Add("s", newStore(t, store.MapOptions{Seed: 1}, 100))
	for i := 0; i <= 100; i++ {
		rec := serve(h, "GET", "/s?refresh="+strconv.Itoa(i))
		if want := `<meta http-equiv="refresh" content="` + strconv.Itoa(i) + `"/>`; rec.Code != 200 || i > 0 && !strings.Contains(rec.Body.String(), want) {
			t.Fatalf("?refresh=%d: code %d, no %s", i, rec.Code, want)
		}
	}
	serve(h, "GET", "/s.json")
	v := h.lookup("s").last
	v.mu.Lock()
	defer v.mu.Unlock()
	if n, most := len(v.rendered), len(refreshChoices)+1; n > most {
		t.Errorf("one view holds %d renderings after 101 refresh periods, want at most %d (those offered, and the JSON)", n, most)
	}
}

// The JSON has the inspect command's field names with the report's values,
// and the counters.
func TestJSON(t *testing.T) {
	s := newStore(t, store.MapOptions{Placement: bucket.GoLeft, Seed: 5}, 3000)
	h := NewHandler(&Options{ShowSeed: true})
	h.Add("main", s)
	rec := serve(h, "GET", "/main.json")
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("code %d, type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	// The schema: every field the inspect command shares, with its type.
	kinds := map[string]string{
		"entries": "number", "buckets": "number", "bucket_size": "number", "placement": "string",
		"choices": "number", "hash": "string", "seed": "number", "histogram": "array", "stash": "number",
		"max_load": "number", "share_at_least": "array", "fluid_share_at_least": "array",
		"parts": "array", "name": "string", "time": "string", "stats": "object", "max_entries": "number",
	}
	for field, kind := range kinds {
		v, ok := doc[field]
		if !ok {
			t.Errorf("no %q", field)
			continue
		}
		if got := jsonKind(v); got != kind {
			t.Errorf("%q is a %s, want a %s", field, got, kind)
		}
	}
	stats, _ := doc["stats"].(map[string]any)
	for _, field := range []string{"gets", "hits", "misses", "sets", "deletes", "grows", "entries", "buckets", "stash", "growing", "hit_ratio"} {
		if _, ok := stats[field]; !ok {
			t.Errorf("no stats.%s", field)
		}
	}
	if _, err := time.Parse(time.RFC3339Nano, doc["time"].(string)); err != nil {
		t.Errorf("time: %v", err)
	}

	// The values: the report's, decoded back.
	var got struct {
		store.Report
		Stats struct {
			store.Stats
			HitRatio *float64 `json:"hit_ratio"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := s.Report()
	if got.Entries != 3000 || got.Placement != bucket.GoLeft || got.Seed != 5 || got.Buckets != want.Buckets ||
		!slices.Equal(got.Histogram, want.Histogram) || !slices.Equal(got.FluidShareAtLeast, want.FluidShareAtLeast) ||
		len(got.Parts) != 2 || !slices.Equal(got.Parts[1].Histogram, want.Parts[1].Histogram) {
		t.Errorf("JSON report %+v, want %+v", got.Report, *want)
	}
	if got.Stats.Gets != 20 || got.Stats.Hits != 10 || got.Stats.HitRatio == nil || *got.Stats.HitRatio != 0.5 {
		t.Errorf("stats %+v", got.Stats)
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case bool:
		return "bool"
	}
	return "null"
}

func TestErrors(t *testing.T) {
	h := NewHandler(nil)
	h.Add("s", newStore(t, store.MapOptions{Seed: 1}, 10))
	for _, c := range []struct {
		method, path string
		code         int
		allow        string
	}{
		{"GET", "/nosuch", 404, ""},
		{"GET", "/nosuch.json", 404, ""},
		{"GET", "/s/extra", 404, ""},
		{"GET", "/s.snapshot", 404, ""}, // snapshots are off, and this store cannot save
		{"POST", "/s.snapshot", 404, ""},
		{"POST", "/s", 405, "GET, HEAD"},
		{"PUT", "/s.json", 405, "GET, HEAD"},
		{"DELETE", "/", 405, "GET, HEAD"},
		{"HEAD", "/s.snapshot", 404, ""},
		{"POST", "/nosuch", 405, "GET, HEAD"}, // the method is checked first
	} {
		rec := serve(h, c.method, c.path)
		if rec.Code != c.code || rec.Header().Get("Allow") != c.allow {
			t.Errorf("%s %s: code %d, Allow %q; want %d, %q", c.method, c.path, rec.Code, rec.Header().Get("Allow"), c.code, c.allow)
		}
	}
	for _, p := range []string{"/", "/s", "/s.json"} {
		if rec := serve(h, "HEAD", p); rec.Code != 200 {
			t.Errorf("HEAD %s: code %d", p, rec.Code)
		}
	}
}

// Every answer says Cache-Control: no-store, as doc.go has it, errors
// and redirects included: a 404, 405 or 301 is cacheable by default
// (RFC 9110 15.1), and a store may be added a moment after a 404. The
// header goes on every answer, not only on a page, JSON or snapshot.
func TestNoStoreOnEveryAnswer(t *testing.T) {
	ss := &savingStore{Map: newStore(t, store.MapOptions{Seed: 1}, 10), entered: make(chan struct{}), release: make(chan struct{})}
	h := NewHandler(&Options{Snapshots: true})
	h.Add("s", ss)
	mux := http.NewServeMux()
	mux.Handle("/solo", http.StripPrefix("/solo", h))
	for _, c := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/", 200},
		{"GET", "/s", 200},
		{"GET", "/s.json", 200},
		{"GET", "/nosuch", 404},
		{"GET", "/s/extra", 404},
		{"HEAD", "/nosuch.json", 404},
		{"POST", "/s", 405},
		{"HEAD", "/s.snapshot", 405},
		{"GET", "/s.snapshot", 405},
		{"GET", "/s?refresh=x", 400},
		{"GET", "/solo", 301},
	} {
		rec := serve(mux, c.method, c.path)
		if !strings.HasPrefix(c.path, "/solo") {
			rec = serve(h, c.method, c.path)
		}
		if rec.Code != c.code || rec.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("%s %s: code %d, Cache-Control %q; want %d, no-store", c.method, c.path, rec.Code, rec.Header().Get("Cache-Control"), c.code)
		}
	}
	// 503 while a snapshot is written, and the snapshot itself.
	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- serve(h, "POST", "/s.snapshot") }()
	<-ss.entered
	if rec := serve(h, "POST", "/s.snapshot"); rec.Code != 503 || rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("second snapshot: code %d, Cache-Control %q; want 503, no-store", rec.Code, rec.Header().Get("Cache-Control"))
	}
	close(ss.release)
	if rec := <-done; rec.Code != 200 || rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("snapshot: code %d, Cache-Control %q; want 200, no-store", rec.Code, rec.Header().Get("Cache-Control"))
	}
}

func TestAddRemove(t *testing.T) {
	h := NewHandler(nil)
	s := newStore(t, store.MapOptions{Seed: 1}, 10)
	for _, bad := range []string{"", "a/b", "a.json", "a b", "é", strings.Repeat("x", 65)} {
		if err := h.Add(bad, s); !errors.Is(err, ErrName) {
			t.Errorf("Add(%q) = %v", bad, err)
		}
	}
	if err := h.Add("ok", nil); !errors.Is(err, ErrName) {
		t.Errorf("Add of a nil store = %v", err)
	}
	if err := h.Add("A-b_9", s); err != nil {
		t.Fatal(err)
	}
	if err := h.Add("A-b_9", s); !errors.Is(err, ErrName) {
		t.Errorf("second Add = %v", err)
	}
	if !slices.Equal(h.Names(), []string{"A-b_9"}) {
		t.Errorf("Names = %v", h.Names())
	}
	if !h.Remove("A-b_9") || h.Remove("A-b_9") {
		t.Error("Remove")
	}
	if rec := serve(h, "GET", "/A-b_9"); rec.Code != 404 {
		t.Errorf("removed store: code %d", rec.Code)
	}
}

// Stores of different key and value types share one handler; the index
// lists them with working links.
func TestIndexAndMounting(t *testing.T) {
	a := newStore(t, store.MapOptions{Seed: 1}, 100)
	b, _ := store.NewMap[uint64, []byte](store.MapOptions{Placement: bucket.DChoice, Seed: 2})
	for i := range uint64(50) {
		b.Set(i, []byte("v"))
	}
	h := NewHandler(nil)
	h.Add("strings", a)
	h.Add("blobs", b)
	mux := http.NewServeMux()
	mux.Handle("/debug/twochoice/", http.StripPrefix("/debug/twochoice", h))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	base, _ := url.Parse(srv.URL + "/debug/twochoice/")
	body := fetch(t, base.String(), 200)
	doc := parsePage(t, body)
	var links []string
	for _, a := range doc.byID(t, "stores").find(byName("a")) {
		links = append(links, a.attr["href"])
	}
	if want := []string{"blobs", "blobs.json", "strings", "strings.json"}; !slices.Equal(links, want) {
		t.Fatalf("index links %v, want %v", links, want)
	}
	// Every relative link of a store page resolves to a page that exists.
	page, _ := base.Parse("strings")
	doc = parsePage(t, fetch(t, page.String(), 200))
	for _, a := range doc.find(byName("a")) {
		u, err := page.Parse(a.attr["href"])
		if err != nil {
			t.Fatal(err)
		}
		fetch(t, u.String(), 200)
	}
	// Mounted without the trailing slash, the index redirects to it.
	mux.Handle("/solo", http.StripPrefix("/solo", h))
	mux.Handle("/solo/", http.StripPrefix("/solo", h))
	if got := fetch(t, srv.URL+"/solo", 200); !strings.Contains(got, `href="strings"`) {
		t.Error("no index after the redirect")
	}
}

// The redirect to the index's slash leads to the mount point with a
// slash and the same query, whatever the mount's last segment and the
// query hold. A Location of the segment and the raw query as they stand
// would send GET /solo?x=1#y (a '#' that Go's server lets through) to
// "solo/?x=1#y", which loses "#y" to a fragment, and the clients of a
// handler mounted at /a:b to "a:b/", a URL of scheme "a".
func TestRedirectToSlash(t *testing.T) {
	h := NewHandler(nil)
	for _, c := range []struct{ mount, target, path, query string }{
		{"/solo", "/solo", "/solo/", ""},
		{"/solo", "/solo?refresh=5", "/solo/", "refresh=5"},
		{"/solo", "/solo?x=1#y", "/solo/", "x=1%23y"},
		{"/debug/a:b", "/debug/a:b", "/debug/a:b/", ""},
		{"/debug/a b", "/debug/a%20b", "/debug/a b/", ""},
	} {
		rec := serve(http.StripPrefix(c.mount, h), "GET", c.target)
		base, _ := url.ParseRequestURI(c.target)
		to, err := base.Parse(rec.Header().Get("Location"))
		if rec.Code != http.StatusMovedPermanently || err != nil || to.Path != c.path || to.RawQuery != c.query || to.Scheme != "" {
			t.Errorf("GET %s under %s: code %d, Location %q (%v); want 301 to %s?%s", c.target, c.mount, rec.Code, rec.Header().Get("Location"), err, c.path, c.query)
		}
	}
}

func fetch(t *testing.T, u string, code int) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != code {
		t.Fatalf("GET %s: %d, want %d: %s", u, resp.StatusCode, code, b)
	}
	if resp.Request.URL.Path == "/solo" {
		t.Fatal("not redirected")
	}
	return string(b)
}

// countingStore counts the views taken of a store, each made slow so
// that requests overlap.
type countingStore struct {
	Store
	loads atomic.Int64
	delay time.Duration
}

func (c *countingStore) Report() *store.Report {
	c.loads.Add(1)
	time.Sleep(c.delay)
	return c.Store.Report()
}

// Concurrent requests share the view being taken; a fresh view is shown
// again until MaxAge, and a negative MaxAge takes one per request.
func TestViewsAreShared(t *testing.T) {
	for _, c := range []struct {
		maxAge            time.Duration
		concurrent, after int64 // loads for 20 concurrent requests, then for 3 more in turn
	}{
		{-1, 1, 3},
		{time.Hour, 1, 0},
	} {
		cs := &countingStore{Store: newStore(t, store.MapOptions{Seed: 1}, 100), delay: 50 * time.Millisecond}
		h := NewHandler(&Options{MaxAge: c.maxAge})
		h.Add("s", cs)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				path := "/s"
				if i%2 == 1 {
					path = "/s.json"
				}
				if rec := serve(h, "GET", path); rec.Code != 200 {
					t.Errorf("code %d", rec.Code)
				}
			}()
		}
		close(start)
		wg.Wait()
		// The requests may straddle the end of the first view: allow one
		// more, never one each.
		if n := cs.loads.Load(); n < c.concurrent || n > c.concurrent+1 {
			t.Errorf("MaxAge %v: %d views for 20 concurrent requests, want %d", c.maxAge, n, c.concurrent)
		}
		before := cs.loads.Load()
		for range 3 {
			serve(h, "GET", "/s")
		}
		if n := cs.loads.Load() - before; n != c.after {
			t.Errorf("MaxAge %v: %d views for 3 requests in turn, want %d", c.maxAge, n, c.after)
		}
	}
}

// A counter that store.Stats gains later shows on the page, under its JSON
// name, with no change to the page.
func TestNewCountersAppear(t *testing.T) {
	type statsLater struct { // store.Stats as the cache mode may leave it
		Gets, Hits, Misses uint64
		Evictions          uint64 `json:"evictions"`
		Expirations        uint64 `json:"expirations"`
		Sets, Deletes      uint64
		Entries            int
		Growing            bool
	}
	rows := counterRows(reflect.ValueOf(statsLater{Gets: 4, Hits: 3, Misses: 1, Evictions: 1234, Expirations: 5, Sets: 9}), row{Label: "hit ratio", Value: "75%"})
	var labels []string
	for _, r := range rows {
		labels = append(labels, r.Label+"="+r.Value)
	}
	want := []string{"gets=4", "hits=3", "misses=1", "hit ratio=75%", "sets=9", "deletes=0", "evictions=1,234", "expirations=5"}
	if !slices.Equal(labels, want) {
		t.Errorf("rows %v, want %v", labels, want)
	}
	// And every field of today's Stats is either shown or placed on
	// purpose.
	st := reflect.TypeFor[store.Stats]()
	shown := map[string]bool{}
	for _, o := range statOrder {
		shown[o.field] = true
	}
	for i := range st.NumField() {
		if !shown[st.Field(i).Name] {
			t.Errorf("store.Stats.%s has no place in statOrder (it shows, under its JSON name; give it a label)", st.Field(i).Name)
		}
	}
}

// Pages load while other goroutines write, grow the table and delete:
// the race detector watches, and every page is whole.
func TestPagesDuringWrites(t *testing.T) {
	s := newStore(t, store.MapOptions{Seed: 3}, 1000)
	h := NewHandler(&Options{MaxAge: -1})
	h.Add("s", s)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprintf("w%d:%d", w, i)
				s.Set(k, i)
				if i%3 == 0 {
					s.Delete(k)
				}
				s.Get(k)
			}
		}()
	}
	n := 30
	if testing.Short() {
		n = 10
	}
	for range n {
		rec := serve(h, "GET", "/s")
		if rec.Code != 200 {
			t.Fatalf("code %d", rec.Code)
		}
		parsePage(t, rec.Body.String())
		var doc map[string]any
		if err := json.Unmarshal(serve(h, "GET", "/s.json").Body.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
}

// A view older than MaxAge is not shown again: the next request takes a
// new one. (TestViewsAreShared checks that a fresh view is reused.)
func TestViewsExpire(t *testing.T) {
	cs := &countingStore{Store: newStore(t, store.MapOptions{Seed: 1}, 100)}
	const maxAge = 10 * time.Millisecond
	h := NewHandler(&Options{MaxAge: maxAge})
	h.Add("s", cs)
	for i := range 3 {
		if rec := serve(h, "GET", "/s.json"); rec.Code != 200 {
			t.Fatalf("code %d", rec.Code)
		}
		if n := cs.loads.Load(); n != int64(i+1) {
			t.Fatalf("%d views for %d requests each %v after the last view", n, i+1, 2*maxAge)
		}
		time.Sleep(2 * maxAge)
	}
}

// HEAD is answered with the status and headers of GET and no body, by
// the handler itself rather than left to net/http to drop, so that a
// recorder, a middleware or another server gets no page either.
// Errors on a route that takes HEAD have no body either.
func TestHead(t *testing.T) {
	h := NewHandler(&Options{MaxAge: time.Hour}) // one view, so GET and HEAD show the same
	h.Add("s", newStore(t, store.MapOptions{Seed: 1}, 100))
	for _, p := range []string{"/", "/s", "/s?refresh=5", "/s.json", "/nosuch", "/nosuch.json", "/s?refresh=x", "/s/extra"} {
		get, head := serve(h, "GET", p), serve(h, "HEAD", p)
		if head.Body.Len() != 0 {
			t.Errorf("HEAD %s: a body of %d bytes", p, head.Body.Len())
		}
		if head.Code != get.Code {
			t.Errorf("HEAD %s: code %d, GET's %d", p, head.Code, get.Code)
		}
		for _, k := range []string{"Content-Type", "Content-Length", "Cache-Control", "Content-Security-Policy"} {
			if g, hd := get.Header().Get(k), head.Header().Get(k); g != hd {
				t.Errorf("HEAD %s: %s %q, GET's %q", p, k, hd, g)
			}
		}
		if get.Code == 200 && get.Header().Get("Content-Length") != strconv.Itoa(get.Body.Len()) {
			t.Errorf("GET %s: Content-Length %q for a body of %d bytes", p, get.Header().Get("Content-Length"), get.Body.Len())
		}
	}
	// Snapshots take no HEAD, and say so without a body.
	hs := NewHandler(&Options{Snapshots: true})
	hs.Add("s", newStore(t, store.MapOptions{Seed: 1}, 100))
	if rec := serve(hs, "HEAD", "/s.snapshot"); rec.Code != http.StatusMethodNotAllowed || rec.Body.Len() != 0 {
		t.Errorf("HEAD /s.snapshot: code %d, a body of %d bytes", rec.Code, rec.Body.Len())
	}
}

// A cache's page and JSON show its eviction policy as Policy reports it;
// a map's have none.
func TestPolicy(t *testing.T) {
	c, err := store.NewCache[string, int](store.CacheOptions[string, int]{MaxEntries: 1000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// A loop over twice the cache: the policy leaves the ranking it
	// starts with.
	for i := range 100_000 {
		k := "key:" + strconv.Itoa(i%2000)
		if _, ok := c.Get(k); !ok {
			c.Set(k, i)
		}
	}
	p := c.Policy()
	if p.ChangesTotal == 0 {
		t.Fatalf("no change of policy on a loop: %+v", p)
	}
	m := newStore(t, store.MapOptions{Seed: 5}, 100)
	h := NewHandler(&Options{MaxAge: -1})
	h.Add("cache", c)
	h.Add("map", m)

	card := parsePage(t, serve(h, "GET", "/cache").Body.String()).byID(t, "policy").text.String()
	last := p.Changes[len(p.Changes)-1]
	for _, want := range []string{"Eviction policy", "ranking", p.Ranking, "relocating", "1 key in 2", "changes", last.From + " → " + last.To} {
		if !strings.Contains(card, want) {
			t.Errorf("the policy card lacks %q: %s", want, card)
		}
	}
	if n := len(parsePage(t, serve(h, "GET", "/map").Body.String()).find(func(e *element) bool { return e.attr["id"] == "policy" })); n != 0 {
		t.Errorf("a map's page has %d policy cards", n)
	}

	var doc struct {
		Policy *store.PolicyState `json:"policy"`
	}
	if err := json.Unmarshal(serve(h, "GET", "/cache.json").Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Policy == nil || doc.Policy.Ranking != p.Ranking || doc.Policy.ChangesTotal != p.ChangesTotal || len(doc.Policy.Miniatures) != len(p.Miniatures) {
		t.Errorf("JSON policy %+v, want %+v", doc.Policy, p)
	}
	if b := serve(h, "GET", "/map.json").Body.String(); strings.Contains(b, `"policy"`) {
		t.Errorf("a map's JSON has a policy:\n%s", b)
	}
}

// A pinned cache's policy rows say that it is pinned and that no
// challenger takes over; an adaptive one's give the bar.
func TestPolicyRowsPinned(t *testing.T) {
	p := &store.PolicyState{Ranking: "recency", Prior: "short", Bar: 4, Miniatures: []store.MiniatureState{{Ranking: "recency"}, {Ranking: "due", Lead: 5}}}
	for _, pinned := range []bool{false, true} {
		p.Pinned = pinned
		var notes []string
		for _, r := range policyRows(p) {
			notes = append(notes, r.Note)
		}
		all := strings.Join(notes, "\n")
		if got := strings.Contains(all, "pinned by CacheOptions.Ranking") && strings.Contains(all, "leads by 5.0; the ranking is pinned"); got != pinned {
			t.Errorf("pinned %v: rows say pinned %v:\n%s", pinned, got, all)
		}
		if got := strings.Contains(all, "takes over past 4"); got == pinned {
			t.Errorf("pinned %v: rows give the bar %v:\n%s", pinned, got, all)
		}
	}
}
