package storehttp

import (
	"context"
	"errors"
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
// store.Store's own SaveContext. The handler saves through SaveContext
// when a store has it, as this one does.
type savingStore struct {
	*store.Store[string, int]
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
	return s.Store.SaveContext(ctx, path, progress)
}

func TestSnapshotDownload(t *testing.T) {
	ss := &savingStore{Store: newStore(t, store.Options{Seed: 4}, 500)}
	h := NewHandler(&Options{Snapshots: true})
	h.Add("s", ss)
	// A Store without Save: the interface hides *store.Store's method.
	h.Add("plain", struct{ Store }{newStore(t, store.Options{Seed: 4}, 5)})

	// The page offers the download only where there is one.
	if !strings.Contains(serve(h, "GET", "/s").Body.String(), `href="s.snapshot"`) {
		t.Error("no snapshot link on a saving store's page")
	}
	if strings.Contains(serve(h, "GET", "/plain").Body.String(), `.snapshot"`) {
		t.Error("a snapshot link on a store that cannot save")
	}
	if rec := serve(h, "GET", "/plain.snapshot"); rec.Code != 404 {
		t.Errorf("snapshot of a store that cannot save: %d", rec.Code)
	}

	rec := serve(h, "GET", "/s.snapshot")
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
	if rec := serve(h, "GET", "/s.snapshot"); rec.Code != 500 || !strings.Contains(rec.Body.String(), "cannot be encoded") {
		t.Errorf("failed save: code %d, %q", rec.Code, rec.Body.String())
	}
}

func TestSnapshotsOffByDefault(t *testing.T) {
	h := NewHandler(nil)
	h.Add("s", &savingStore{Store: newStore(t, store.Options{Seed: 4}, 5)})
	if rec := serve(h, "GET", "/s.snapshot"); rec.Code != 404 {
		t.Errorf("code %d", rec.Code)
	}
	if strings.Contains(serve(h, "GET", "/s").Body.String(), ".snapshot") {
		t.Error("snapshot link while snapshots are off")
	}
}

// One snapshot at a time: a second request while one is written gets 503.
func TestOneSnapshotAtATime(t *testing.T) {
	ss := &savingStore{Store: newStore(t, store.Options{Seed: 4}, 5), entered: make(chan struct{}), release: make(chan struct{})}
	h := NewHandler(&Options{Snapshots: true})
	h.Add("s", ss)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if rec := serve(h, "GET", "/s.snapshot"); rec.Code != 200 {
			t.Errorf("first snapshot: %d", rec.Code)
		}
	}()
	<-ss.entered
	rec := serve(h, "GET", "/s.snapshot")
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Errorf("second snapshot: %d", rec.Code)
	}
	close(ss.release)
	wg.Wait()
	go func() { <-ss.entered }()
	if rec := serve(h, "GET", "/s.snapshot"); rec.Code != 200 {
		t.Errorf("after the first: %d", rec.Code)
	}
}

// TestSnapshotClientGone: a snapshot whose client has gone is not written
// for no one. The route saves with the request's context, so the Save
// stops and the request gets an error, not a whole store's file.
func TestSnapshotClientGone(t *testing.T) {
	h := NewHandler(&Options{Snapshots: true})
	h.Add("s", newStore(t, store.Options{Seed: 4}, 500))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/s.snapshot", nil).WithContext(ctx))
	if rec.Code == http.StatusOK {
		t.Fatalf("snapshot for a client that has gone: 200 with %d bytes", rec.Body.Len())
	}
	if !strings.Contains(rec.Body.String(), context.Canceled.Error()) {
		t.Errorf("body %q does not say the request was canceled", rec.Body.String())
	}
	// The route is free again for the next client.
	if rec := serve(h, "GET", "/s.snapshot"); rec.Code != http.StatusOK {
		t.Errorf("next snapshot: %d %s", rec.Code, rec.Body.String())
	}
}
