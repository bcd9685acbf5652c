package storehttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twochoice/twochoice/internal/snapshot"
	"github.com/twochoice/twochoice/store"
)

// savingStore is a store whose Save can be made to fail or to wait, and
// which records the paths it was asked to save to; otherwise it saves with
// store.Map's own SaveContext. The handler saves through SaveContext
// when a store has it, as this one does.
type savingStore struct {
	*store.Map[string, int]
	fail    error
	entered chan struct{} // if set, receives when Save starts
	release chan struct{} // if set, Save waits for it
	paths   []string
}

func (s *savingStore) Save(path string) error {
	return s.SaveContext(context.Background(), path, nil)
}

func (s *savingStore) SaveContext(ctx context.Context, path string, progress func(done, total uint64)) error {
	s.paths = append(s.paths, path)
	if s.entered != nil {
		s.entered <- struct{}{}
	}
	if s.release != nil {
		<-s.release
	}
	if s.fail != nil {
		return s.fail
	}
	return s.Map.SaveContext(ctx, path, progress)
}

func TestSnapshotDownload(t *testing.T) {
	ss := &savingStore{Map: newStore(t, store.MapOptions{Seed: 4}, 500)}
	h := NewHandler(&Options{Snapshots: true})
	h.Add("s", ss)
	// A Store without Save: the interface hides *store.Map's method.
	h.Add("plain", struct{ Store }{newStore(t, store.MapOptions{Seed: 4}, 5)})

	// The page offers the download only where there is one, as a form
	// that POSTs, not a link that a prefetcher would follow.
	page := serve(h, "GET", "/s").Body.String()
	if !strings.Contains(page, `<form method="post" action="s.snapshot">`) || strings.Contains(page, `href="s.snapshot"`) {
		t.Error("no snapshot form, or a snapshot link, on a saving store's page")
	}
	if strings.Contains(serve(h, "GET", "/plain").Body.String(), `.snapshot"`) {
		t.Error("a snapshot form on a store that cannot save")
	}
	if rec := serve(h, "POST", "/plain.snapshot"); rec.Code != 404 {
		t.Errorf("snapshot of a store that cannot save: %d", rec.Code)
	}

	rec := serve(h, "POST", "/s.snapshot")
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/octet-stream" ||
		!strings.HasPrefix(rec.Header().Get("Content-Disposition"), `attachment; filename="s-`) {
		t.Fatalf("code %d, headers %v", rec.Code, rec.Header())
	}
	// What was streamed is the snapshot, whole: it opens and its records
	// are the store's.
	got := filepath.Join(t.TempDir(), "got.snapshot")
	if err := os.WriteFile(got, rec.Body.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := snapshot.Open(got, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	dec := snapshot.NewDecoder[string, int]()
	if err := r.ForEach(func(rec []byte) error {
		k, v, _, _, err := dec.DecodeRecord(rec)
		if err != nil {
			return err
		}
		if w, ok := ss.Get(k); !ok || w != v {
			t.Errorf("record %q=%d, store has %d, %v", k, v, w, ok)
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 500 || r.Meta().Entries != 500 {
		t.Errorf("%d records, meta says %d", n, r.Meta().Entries)
	}
	// The temporary file is gone.
	if _, err := os.Stat(filepath.Dir(ss.paths[0])); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary directory left behind: %v", err)
	}

	ss.fail = errors.New("value type cannot be encoded")
	if rec := serve(h, "POST", "/s.snapshot"); rec.Code != 500 || !strings.Contains(rec.Body.String(), "cannot be encoded") {
		t.Errorf("failed save: code %d, %q", rec.Code, rec.Body.String())
	}
}

// Without Options.Snapshots there is no snapshot route, whatever the
// method, and nothing is saved.
func TestSnapshotsOffByDefault(t *testing.T) {
	ss := &savingStore{Map: newStore(t, store.MapOptions{Seed: 4}, 5)}
	h := NewHandler(nil)
	h.Add("s", ss)
	for _, m := range []string{"GET", "HEAD", "POST"} {
		if rec := serve(h, m, "/s.snapshot"); rec.Code != 404 {
			t.Errorf("%s /s.snapshot: code %d", m, rec.Code)
		}
	}
	if strings.Contains(serve(h, "GET", "/s").Body.String(), ".snapshot") {
		t.Error("snapshot form while snapshots are off")
	}
	if len(ss.paths) != 0 {
		t.Errorf("saved to %v", ss.paths)
	}
}

// A snapshot is taken on POST alone: a GET, which link prefetchers and
// crawlers send, runs no Save and gets 405 naming POST.
func TestSnapshotPostOnly(t *testing.T) {
	ss := &savingStore{Map: newStore(t, store.MapOptions{Seed: 4}, 5)}
	h := NewHandler(&Options{Snapshots: true})
	h.Add("s", ss)
	for _, m := range []string{"GET", "HEAD", "PUT"} {
		if rec := serve(h, m, "/s.snapshot"); rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "POST" {
			t.Errorf("%s /s.snapshot: code %d, Allow %q; want 405, POST", m, rec.Code, rec.Header().Get("Allow"))
		}
	}
	if len(ss.paths) != 0 {
		t.Fatalf("a GET saved to %v", ss.paths)
	}
	if rec := serve(h, "POST", "/s.snapshot"); rec.Code != 200 || len(ss.paths) != 1 {
		t.Errorf("POST /s.snapshot: code %d, %d saves", rec.Code, len(ss.paths))
	}
}

// A POST that a browser says another site's page sent (a form posted
// across sites) gets 403 and runs no Save; the page's own form, and
// clients that are not browsers, get the snapshot.
func TestSnapshotCrossSite(t *testing.T) {
	ss := &savingStore{Map: newStore(t, store.MapOptions{Seed: 4}, 5)}
	h := NewHandler(&Options{Snapshots: true})
	h.Add("s", ss)
	for _, c := range []struct {
		header, value string
		code          int
	}{
		{"Sec-Fetch-Site", "cross-site", http.StatusForbidden},
		{"Sec-Fetch-Site", "same-site", http.StatusForbidden},
		{"Origin", "http://attacker.example", http.StatusForbidden},
		{"Sec-Fetch-Site", "same-origin", http.StatusOK},
		{"Origin", "http://example.com", http.StatusOK}, // the request's own host
		{"", "", http.StatusOK},
	} {
		before := len(ss.paths)
		r := httptest.NewRequest("POST", "http://example.com/s.snapshot", nil)
		if c.header != "" {
			r.Header.Set(c.header, c.value)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		saved := len(ss.paths) - before
		if rec.Code != c.code || (c.code == http.StatusOK) != (saved == 1) {
			t.Errorf("POST with %s: %q: code %d, %d saves; want %d", c.header, c.value, rec.Code, saved, c.code)
		}
	}
}

// The download sets its own write deadline: a server whose WriteTimeout
// is shorter than the Save still delivers the snapshot whole, where the
// server's deadline, running from the request, would cut it short.
func TestSnapshotOutlivesWriteTimeout(t *testing.T) {
	ss := &savingStore{Map: newStore(t, store.MapOptions{Seed: 4}, 2000), release: make(chan struct{})}
	h := NewHandler(&Options{Snapshots: true})
	h.Add("s", ss)
	srv := httptest.NewUnstartedServer(h)
	srv.Config.WriteTimeout = 100 * time.Millisecond
	srv.Start()
	defer srv.Close()
	time.AfterFunc(300*time.Millisecond, func() { close(ss.release) })
	resp, err := http.Post(srv.URL+"/s.snapshot", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST /s.snapshot: %d, %d bytes, %v", resp.StatusCode, len(body), err)
	}
	got := filepath.Join(t.TempDir(), "got.snapshot")
	if err := os.WriteFile(got, body, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := snapshot.Open(got, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Meta().Entries != 2000 {
		t.Errorf("the snapshot holds %d entries, want 2000", r.Meta().Entries)
	}
	if d := snapshotDeadline(145 << 20); d < 2*time.Minute || d > 4*time.Minute {
		t.Errorf("a 145 MiB download may take %v; want a few minutes", d)
	}
}

// One snapshot at a time: a second request while one is written gets 503.
func TestOneSnapshotAtATime(t *testing.T) {
	ss := &savingStore{Map: newStore(t, store.MapOptions{Seed: 4}, 5), entered: make(chan struct{}), release: make(chan struct{})}
	h := NewHandler(&Options{Snapshots: true})
	h.Add("s", ss)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if rec := serve(h, "POST", "/s.snapshot"); rec.Code != 200 {
			t.Errorf("first snapshot: %d", rec.Code)
		}
	}()
	<-ss.entered
	rec := serve(h, "POST", "/s.snapshot")
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Errorf("second snapshot: %d", rec.Code)
	}
	close(ss.release)
	wg.Wait()
	go func() { <-ss.entered }()
	if rec := serve(h, "POST", "/s.snapshot"); rec.Code != 200 {
		t.Errorf("after the first: %d", rec.Code)
	}
}

// TestSnapshotClientGone: a snapshot whose client has gone is not written
// for no one. The route saves with the request's context, so the Save
// stops and the request gets an error, not a whole store's file.
func TestSnapshotClientGone(t *testing.T) {
	h := NewHandler(&Options{Snapshots: true})
	h.Add("s", newStore(t, store.MapOptions{Seed: 4}, 500))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/s.snapshot", nil).WithContext(ctx))
	if rec.Code == http.StatusOK {
		t.Fatalf("snapshot for a client that has gone: 200 with %d bytes", rec.Body.Len())
	}
	if !strings.Contains(rec.Body.String(), context.Canceled.Error()) {
		t.Errorf("body %q does not say the request was canceled", rec.Body.String())
	}
	// The route is free again for the next client.
	if rec := serve(h, "POST", "/s.snapshot"); rec.Code != http.StatusOK {
		t.Errorf("next snapshot: %d %s", rec.Code, rec.Body.String())
	}
}
