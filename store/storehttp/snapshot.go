package storehttp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Saver is a store that can write a snapshot of itself to a file, as
// *store.Map and *store.Cache do (their Save); a store that is not one
// gets no snapshot route (404). With
// Options.Snapshots set, POST /NAME.snapshot has the store save a snapshot
// into a fresh temporary directory, streams the file and removes it.
// Save must write the whole file before it returns, and may fail (a value
// type it cannot encode, a full disk): the request then gets a 500 with
// Save's error.
type Saver interface {
	Save(path string) error
}

// contextSaver is a Saver that can give up part way, as *store.Map and
// *store.Cache can (their SaveContext). The snapshot route saves through it when it can,
// with the request's context: a client that goes away during a long Save
// stops the walk instead of leaving a whole store's copy to be written,
// for no one, while every other snapshot request is turned away.
type contextSaver interface {
	SaveContext(ctx context.Context, path string, progress func(done, total uint64)) error
}

// canSave reports whether the snapshot route serves the named store.
func (h *Handler) canSave(name string) bool {
	if !h.snapshots {
		return false
	}
	src := h.lookup(name)
	if src == nil {
		return false
	}
	_, ok := src.s.(Saver)
	return ok
}

// The snapshot is taken on POST alone, not on GET with a token in its
// URL: each request runs a whole Save, and browsers, link previews and
// crawlers fetch what a page links to (prefetching it, or to show it)
// without anyone asking for a snapshot, but none of them POSTs. A token
// would have to be shown to whoever is to use it, and would stay in
// histories and logs. A cross-site page can still make a browser POST
// (a form): crossOrigin refuses such requests by the Sec-Fetch-Site and
// Origin headers that browsers send with them; clients that send
// neither (curl, scripts) are not browsers, and are let through.
var crossOrigin = http.NewCrossOriginProtection()

// The download's write deadline, set through http.ResponseController so
// that a server's WriteTimeout, sized for pages, neither cuts a large
// snapshot short nor is the only bound: none while the store saves (the
// client's going away stops that, through the request's context), then
// snapshotSlack plus a second per snapshotRate bytes of the file. A
// client that reads slower than that loses the download, and the route,
// which takes one snapshot at a time, is free again: a snapshot of
// 145 MB holds it for three minutes at most.
const (
	snapshotSlack = 30 * time.Second
	snapshotRate  = 1 << 20 // bytes per second
)

// snapshotDeadline is the time a download of size bytes may take.
func snapshotDeadline(size int64) time.Duration {
	return snapshotSlack + time.Duration(size/snapshotRate)*time.Second
}

func (h *Handler) serveSnapshot(w http.ResponseWriter, r *http.Request, src *source) {
	sv, ok := src.s.(Saver)
	if !ok {
		http.Error(w, fmt.Sprintf("storehttp: no snapshots of %q here", src.name), http.StatusNotFound)
		return
	}
	if err := crossOrigin.Check(r); err != nil {
		http.Error(w, "storehttp: a snapshot is not given to another site's page: "+err.Error(), http.StatusForbidden)
		return
	}
	// One snapshot at a time: each holds a copy of a whole store on disk.
	select {
	case h.saving <- struct{}{}:
		defer func() { <-h.saving }()
	default:
		w.Header().Set("Retry-After", "5")
		http.Error(w, "storehttp: a snapshot is being written; try again shortly", http.StatusServiceUnavailable)
		return
	}
	rc := http.NewResponseController(w)
	// A writer that cannot set deadlines (a ResponseRecorder) has none to
	// lift either.
	_ = rc.SetWriteDeadline(time.Time{})
	dir, err := os.MkdirTemp("", "twochoice-snapshot-")
	if err != nil {
		http.Error(w, "storehttp: "+err.Error(), http.StatusInternalServerError)
		return
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, src.name+snapshotSuffix)
	save := sv.Save
	if cs, ok := sv.(contextSaver); ok {
		save = func(p string) error { return cs.SaveContext(r.Context(), p, nil) }
	}
	if err := save(p); err != nil {
		http.Error(w, fmt.Sprintf("storehttp: snapshot of %q: %v", src.name, err), http.StatusInternalServerError)
		return
	}
	f, err := os.Open(p)
	if err != nil {
		http.Error(w, "storehttp: "+err.Error(), http.StatusInternalServerError)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		http.Error(w, "storehttp: "+err.Error(), http.StatusInternalServerError)
		return
	}
	_ = rc.SetWriteDeadline(time.Now().Add(snapshotDeadline(fi.Size())))
	hd := w.Header()
	hd.Set("Content-Type", "application/octet-stream")
	hd.Set("Content-Length", strconv.FormatInt(fi.Size(), 10))
	hd.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%s%s"`,
		src.name, time.Now().UTC().Format("20060102T150405Z"), snapshotSuffix))
	// A client that goes away mid-download ends the copy with an error
	// that no one can be told about.
	_, _ = io.Copy(w, f)
}
