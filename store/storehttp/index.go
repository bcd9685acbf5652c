package storehttp

import (
	"bytes"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
)

// indexData is what the index page shows: one line per store.
type indexData struct {
	Refresh int // the page has no auto refresh; "head" asks
	Taken   string
	Stores  []indexRow
}

type indexRow struct {
	Name, JSON, Placement, D, C, Entries, Buckets, Utilization, MaxLoad, Stash, HitRatio string
}

func (h *Handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "" && redirectToSlash(w, r) {
		return
	}
	start := time.Now()
	d := &indexData{Taken: start.UTC().Format("2006-01-02 15:04:05.000 UTC")}
	for _, name := range h.Names() {
		src := h.lookup(name)
		if src == nil {
			continue // removed meanwhile
		}
		v := src.view()
		if v == nil {
			continue
		}
		rep, st := v.load, v.stats
		ratio := "–"
		if st.Gets > 0 {
			ratio = percent(st.HitRatio())
		}
		d.Stores = append(d.Stores, indexRow{
			Name: name, JSON: name + jsonSuffix,
			Placement: rep.Placement.String(), D: strconv.Itoa(rep.Choices), C: strconv.Itoa(rep.BucketSize),
			Entries: count(uint64(rep.Entries)), Buckets: count(uint64(rep.Buckets)),
			Utilization: percent(rep.Utilization), MaxLoad: strconv.Itoa(rep.MaxLoad),
			Stash: count(uint64(rep.Stash)), HitRatio: ratio,
		})
	}
	viewed := time.Now()
	var b bytes.Buffer
	if err := pageTemplate.ExecuteTemplate(&b, "index", d); err != nil {
		http.Error(w, "storehttp: "+err.Error(), http.StatusInternalServerError)
		return
	}
	writeHTML(w, b.Bytes(), viewed.Sub(start), time.Since(viewed))
}

// redirectToSlash sends a request for the index without its trailing
// slash (a handler mounted at "/debug/twochoice" rather than under
// "/debug/twochoice/") to the same URL with one, so that the page's
// relative links resolve under the mount point. It uses the request's
// original URI, which http.StripPrefix leaves alone.
func redirectToSlash(w http.ResponseWriter, r *http.Request) bool {
	u, err := url.ParseRequestURI(r.RequestURI)
	if err != nil || u.Path == "" || strings.HasSuffix(u.Path, "/") {
		return false
	}
	// As a url.URL, so that the segment is escaped and, if it has a
	// colon, not taken for a scheme ("./a:b/"); a '#' in the query (which
	// a request line should not carry, but Go's server lets through)
	// is escaped so that the query is not cut at a fragment.
	loc := url.URL{Path: path.Base(u.Path) + "/", RawQuery: strings.ReplaceAll(r.URL.RawQuery, "#", "%23")}
	w.Header().Set("Location", loc.String())
	w.WriteHeader(http.StatusMovedPermanently)
	return true
}
