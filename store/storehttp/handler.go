package storehttp

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twochoice/twochoice/store"
)

// Store is what the pages read from a store. Every *store.Map[K, V] and
// *store.Cache[K, V] has these methods, whatever K and V, so stores of
// different types can share one Handler.
type Store interface {
	Stats() store.Stats
	Report() *store.Report
}

// Options configures a [Handler]. The zero value means the defaults.
type Options struct {
	// MaxAge is how long a view of a store (its Stats and load report,
	// taken together) may be shown again instead of taking a new one:
	// 0 means DefaultMaxAge, and a negative MaxAge makes every request
	// take its own. Either way, requests that arrive while a view is
	// being taken wait for it and share it. The page says when its view
	// was taken.
	MaxAge time.Duration

	// Snapshots turns on the snapshot route (POST /NAME.snapshot) for the
	// stores that can save themselves ([Saver]). It is off by default: a
	// snapshot holds every key and value, where the pages show only
	// counts.
	Snapshots bool

	// ShowSeed shows the stores' hash seeds on their pages and in their
	// JSON (and in expvar, with PublishExpvarOptions). It is off by
	// default: the seed decides where every key goes, and whoever knows
	// it can choose keys that all land in the same few buckets. Hidden,
	// the page says so and the JSON's "seed" is null.
	ShowSeed bool
}

// DefaultMaxAge bounds the cost of the pages: however many people or
// scrapers look, a store is measured at most once per DefaultMaxAge.
const DefaultMaxAge = time.Second

// ErrName is returned by Add and PublishExpvar for a name that cannot be
// used: empty, taken, or (for Add) not a plain path segment.
var ErrName = errors.New("storehttp: bad store name")

// maxNameLen bounds a store's name, which appears in URLs and titles.
const maxNameLen = 64

// Handler serves the debug pages of the stores added to it; see the
// package documentation for the routes. It is safe for concurrent use,
// and stores may be added and removed while it serves.
type Handler struct {
	maxAge    time.Duration
	snapshots bool
	showSeed  bool
	saving    chan struct{} // holds a token while a snapshot is written

	mu     sync.RWMutex
	stores map[string]*source
}

// NewHandler returns a handler with no stores; nil Options means the
// defaults.
func NewHandler(o *Options) *Handler {
	h := &Handler{maxAge: DefaultMaxAge, stores: map[string]*source{}, saving: make(chan struct{}, 1)}
	if o != nil {
		if o.MaxAge != 0 {
			h.maxAge = o.MaxAge
		}
		h.snapshots, h.showSeed = o.Snapshots, o.ShowSeed
	}
	return h
}

// Add serves s under name: its page at /NAME and its JSON at /NAME.json.
// A name is 1 to 64 ASCII letters, digits, '-' and '_', so that it is a
// path segment as it stands; a name already in use is an error (Remove
// it first).
func (h *Handler) Add(name string, s Store) error {
	if err := checkName(name); err != nil {
		return err
	}
	if s == nil {
		return fmt.Errorf("%w: %q: nil store", ErrName, name)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.stores[name]; ok {
		return fmt.Errorf("%w: %q is already in use", ErrName, name)
	}
	h.stores[name] = newSource(name, s, h.maxAge)
	return nil
}

// Remove stops serving the store named name, and reports whether there
// was one.
func (h *Handler) Remove(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.stores[name]
	delete(h.stores, name)
	return ok
}

// Names returns the names of the stores served, sorted.
func (h *Handler) Names() []string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	names := make([]string, 0, len(h.stores))
	for n := range h.stores {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (h *Handler) lookup(name string) *source {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.stores[name]
}

func checkName(name string) error {
	if name == "" || len(name) > maxNameLen {
		return fmt.Errorf("%w: %q (want 1 to %d characters)", ErrName, name, maxNameLen)
	}
	for _, c := range []byte(name) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
		if !ok {
			return fmt.Errorf("%w: %q (want ASCII letters, digits, '-' and '_')", ErrName, name)
		}
	}
	return nil
}

// The suffixes of the routes beside a store's page.
const (
	jsonSuffix     = ".json"
	snapshotSuffix = ".snapshot"
)

// ServeHTTP serves the index, a store's page, its JSON or its snapshot,
// by the request's path relative to where the handler is mounted (see
// the package documentation).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodHead {
		w = headWriter{w} // no body, whatever the answer
	}
	// Every answer, errors and redirects included: a 404 or 405 is
	// cacheable by default (RFC 9110 15.1), and a store may be added a
	// moment later.
	noStore(w)
	rel := strings.TrimPrefix(r.URL.Path, "/")
	if strings.Contains(rel, "/") {
		http.Error(w, "storehttp: no such page", http.StatusNotFound)
		return
	}
	name, kind := rel, pageRoute
	switch {
	case strings.HasSuffix(rel, jsonSuffix):
		name, kind = strings.TrimSuffix(rel, jsonSuffix), jsonRoute
	case strings.HasSuffix(rel, snapshotSuffix):
		name, kind = strings.TrimSuffix(rel, snapshotSuffix), snapshotRoute
	case rel == "":
		kind = indexRoute
	}
	if kind == snapshotRoute && !h.snapshots {
		// No such route, whatever the method: a 405 would say that a
		// POST is taken.
		http.Error(w, "storehttp: no snapshots here", http.StatusNotFound)
		return
	}
	if !allowed(w, r, kind) {
		return
	}
	if kind == indexRoute {
		h.serveIndex(w, r)
		return
	}
	src := h.lookup(name)
	if src == nil {
		http.Error(w, fmt.Sprintf("storehttp: no store named %q", name), http.StatusNotFound)
		return
	}
	switch kind {
	case pageRoute:
		h.servePage(w, r, src)
	case jsonRoute:
		serveJSON(w, src, h.showSeed)
	case snapshotRoute:
		h.serveSnapshot(w, r, src)
	}
}

type route uint8

const (
	indexRoute route = iota
	pageRoute
	jsonRoute
	snapshotRoute
)

// allowed answers 405 for a method the route does not serve. The pages
// and the JSON take GET, and HEAD as GET with no body (headWriter); a
// snapshot takes POST alone (see serveSnapshot).
func allowed(w http.ResponseWriter, r *http.Request, kind route) bool {
	allow := "GET, HEAD"
	if kind == snapshotRoute {
		allow = "POST"
	}
	if kind == snapshotRoute && r.Method == http.MethodPost ||
		kind != snapshotRoute && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		return true
	}
	w.Header().Set("Allow", allow)
	http.Error(w, fmt.Sprintf("storehttp: method %s not allowed (%s)", r.Method, allow), http.StatusMethodNotAllowed)
	return false
}

// headWriter answers a HEAD request: the handler runs as for GET, setting
// the same status and headers, and headWriter drops the body. Leaving the
// body to net/http's server, which discards it for HEAD, would send it
// through whatever else serves or wraps the handler (a middleware,
// another server, httptest.ResponseRecorder).
type headWriter struct{ http.ResponseWriter }

// Write sends the status and headers, as the first Write of a body would
// (an empty Write does that, and nothing more), and drops p.
func (h headWriter) Write(p []byte) (int, error) {
	if _, err := h.ResponseWriter.Write(nil); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap gives http.ResponseController the writer underneath.
func (h headWriter) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// noStore marks a response as live data that no cache should keep.
// ServeHTTP calls it first, for every answer.
func noStore(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
}
