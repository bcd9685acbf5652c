package storehttp

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twochoice/twochoice/store"
)

// benchKeys is the store size of the page benchmarks: a million keys, or
// ten thousand with -short (CI runs every
// benchmark once with -short).
func benchKeys() int {
	if testing.Short() {
		return 10_000
	}
	return 1_000_000
}

func keyStrings(n int) []string {
	k := make([]string, n)
	for i := range k {
		k[i] = fmt.Sprintf("user:%08x:%d", uint32(i)*2654435761, i)
	}
	return k
}

// BenchmarkPage is the server time of one page, each with a view of its
// own (MaxAge < 0), sequentially: Stats, Report with its fluid limit, the
// charts and the template, against a budget of 50 ms at a million keys.
// html-shared-view is the page rendered from a view already taken: what
// each of many viewers within MaxAge costs.
func BenchmarkPage(b *testing.B) {
	n := benchKeys()
	s, _ := store.NewMap[string, int](store.MapOptions{Seed: 1})
	for i, k := range keyStrings(n) {
		s.Set(k, i)
	}
	for _, c := range []struct {
		name, path string
		maxAge     time.Duration
	}{{"html", "/s", -1}, {"json", "/s.json", -1}, {"html-shared-view", "/s", time.Hour}} {
		b.Run(fmt.Sprintf("%s/keys=%d", c.name, n), func(b *testing.B) {
			h := NewHandler(&Options{MaxAge: c.maxAge})
			h.Add("s", s)
			b.ReportAllocs()
			for b.Loop() {
				if rec := serve(h, "GET", c.path); rec.Code != 200 {
					b.Fatal(rec.Code)
				}
			}
		})
	}
}

// countingLoads counts the views taken.
type countingLoads struct {
	Store
	n atomic.Int64
}

func (c *countingLoads) Report() *store.Report {
	c.n.Add(1)
	return c.Store.Report()
}

// BenchmarkWorkloadWithViewers measures a write-heavy workload's time per
// request with and without people watching its page, in the same run:
// GOMAXPROCS goroutines send 90% Sets (keys drawn uniformly from twice as
// many as are loaded, so about half are inserts and the table grows) and
// 10% Gets to a store of benchKeys keys, while viewers page loads come
// over loopback HTTP: each of the viewers loads the page once a second
// (the page's fastest auto-refresh), starting at phases spread over the
// first second. "fresh" takes a view per page load instead of sharing
// one per MaxAge. Compare ns/op across viewers with benchstat; pages/s
// and views/s say what the viewers got.
func BenchmarkWorkloadWithViewers(b *testing.B) {
	n := benchKeys()
	keys := keyStrings(2 * n)
	for _, c := range []struct {
		viewers int
		fresh   bool
	}{{0, false}, {100, false}, {100, true}} {
		name := fmt.Sprintf("viewers=%d", c.viewers)
		if c.fresh {
			name += ",fresh"
		}
		b.Run(name, func(b *testing.B) {
			s, _ := store.NewMap[string, int](store.MapOptions{Seed: 1})
			for i, k := range keys[:n] {
				s.Set(k, i)
			}
			o := &Options{}
			if c.fresh {
				o.MaxAge = -1
			}
			cs := &countingLoads{Store: s}
			h := NewHandler(o)
			h.Add("s", cs)
			srv := httptest.NewServer(h)
			defer srv.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c.viewers + 1}}
			stop := make(chan struct{})
			var pages, failures atomic.Int64
			var wg sync.WaitGroup
			for v := range c.viewers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					select { // phases spread over the first second
					case <-stop:
						return
					case <-time.After(time.Duration(v) * time.Second / time.Duration(c.viewers)):
					}
					tick := time.NewTicker(time.Second)
					defer tick.Stop()
					for {
						resp, err := client.Get(srv.URL + "/s")
						if err == nil {
							_, err = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
						if err != nil || resp.StatusCode != 200 {
							failures.Add(1)
						}
						pages.Add(1)
						select {
						case <-stop:
							return
						case <-tick.C:
						}
					}
				}()
			}
			var seq atomic.Uint64
			start := time.Now()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				rng := rand.New(rand.NewPCG(seq.Add(1), 7))
				for pb.Next() {
					i := rng.IntN(len(keys))
					if rng.IntN(10) == 0 {
						s.Get(keys[i])
					} else {
						s.Set(keys[i], i)
					}
				}
			})
			b.StopTimer()
			elapsed := time.Since(start).Seconds()
			close(stop)
			wg.Wait()
			if failures.Load() > 0 {
				b.Errorf("%d of %d page loads failed", failures.Load(), pages.Load())
			}
			b.ReportMetric(float64(pages.Load())/elapsed, "pages/s")
			b.ReportMetric(float64(cs.n.Load())/elapsed, "views/s")
		})
	}
}

// BenchmarkBurst is the wall time for 100 concurrent loads of the page of
// a store of benchKeys keys, each burst starting with no view to share.
func BenchmarkBurst(b *testing.B) {
	n := benchKeys()
	s, _ := store.NewMap[string, int](store.MapOptions{Seed: 1})
	for i, k := range keyStrings(n) {
		s.Set(k, i)
	}
	h := NewHandler(&Options{MaxAge: -1})
	h.Add("s", s)
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 101}}
	for b.Loop() {
		var wg sync.WaitGroup
		for range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.Get(srv.URL + "/s")
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}()
		}
		wg.Wait()
	}
}
