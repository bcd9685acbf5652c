package serve

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twochoice/twochoice/bench/workload"
	"github.com/twochoice/twochoice/store"
)

func keys(n int) []string {
	k := make([]string, n)
	for i := range k {
		k[i] = "user:" + strconv.Itoa(i)
	}
	return k
}

func TestConfigErrors(t *testing.T) {
	ok := Workload{Kind: "zipf", ZipfS: 1, Threads: 1}
	for name, c := range map[string]Config{
		"no keys":       {Name: "s", Workload: ok},
		"bad name":      {Name: "a/b", Keys: keys(3), Workload: ok},
		"bad options":   {Name: "s", Keys: keys(3), Workload: ok, Options: store.MapOptions{Choices: 99}},
		"bad workload":  {Name: "s", Keys: keys(3), Workload: Workload{Kind: "lognormal", Threads: 1}},
		"bad zipf":      {Name: "s", Keys: keys(3), Workload: Workload{Kind: "zipf", Threads: 1}},
		"bad shares":    {Name: "s", Keys: keys(3), Workload: Workload{Kind: "uniform", Threads: 1, Writes: 0.6, Deletes: 0.6}},
		"no threads":    {Name: "s", Keys: keys(3), Workload: Workload{Kind: "uniform"}},
		"bad rate":      {Name: "s", Keys: keys(3), Workload: Workload{Kind: "uniform", Threads: 1, Rate: -1}},
		"infinite rate": {Name: "s", Keys: keys(3), Workload: Workload{Kind: "uniform", Threads: 1, Rate: math.Inf(1)}},
		"many threads":  {Name: "s", Keys: keys(3), Workload: Workload{Kind: "uniform", Threads: MaxThreads + 1}},
	} {
		c.Addr = "127.0.0.1:0"
		if _, err := Start(context.Background(), c); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A taken port is an error too, though not a configuration one.
	s := start(t, Config{Name: "s", Keys: keys(3), Workload: Workload{Kind: "none"}})
	if _, err := Start(context.Background(), Config{Addr: s.Addr().String(), Name: "s", Keys: keys(3), Workload: Workload{Kind: "none"}}); err == nil || errors.Is(err, ErrConfig) {
		t.Errorf("taken port: %v", err)
	}
}

func start(t *testing.T, c Config) *Server {
	t.Helper()
	if c.Addr == "" {
		c.Addr = "127.0.0.1:0"
	}
	s, err := Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return s
}

// The workload moves the page's numbers, at about the rate asked for, and
// Shutdown stops it and the server.
func TestServeAndWorkload(t *testing.T) {
	ks := keys(5000)
	s := start(t, Config{Name: "users", Keys: ks, Workload: Workload{
		Kind: "zipf", ZipfS: 1, Writes: 0.2, Deletes: 0.05, Inserts: 0.05, Threads: 2, Rate: 20000, Seed: 3}})
	if !strings.HasSuffix(s.URL(), "/users") || !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL %s", s.URL())
	}
	first := s.Store.Stats()
	time.Sleep(300 * time.Millisecond)
	resp, err := http.Get(s.URL() + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Entries int `json:"entries"`
		Stats   store.Stats
	}
	err = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	st := s.Store.Stats()
	if st.Gets <= first.Gets || st.Sets <= first.Sets || st.Deletes == 0 || st.Misses == 0 {
		t.Errorf("the workload did not move the counters: %+v then %+v", first, st)
	}
	if s.Store.Len() <= len(ks)-int(st.Deletes) {
		t.Errorf("no inserts: %d entries after %d deletes", s.Store.Len(), st.Deletes)
	}
	// Paced at 20,000 a second: far fewer than the threads could send.
	if n := s.Requests(); n == 0 || n > 20000 {
		t.Errorf("%d requests in about 0.3 s at 20,000/s", n)
	}
	for _, p := range []string{"/", "/users", "/debug/vars"} {
		resp, err := http.Get(strings.TrimSuffix(s.URL(), "/users") + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := 200
		if p == "/debug/vars" {
			want = 404 // Expvar was not asked for
		}
		if resp.StatusCode != want {
			t.Errorf("%s: %d", p, resp.StatusCode)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-s.Wait(); !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("served: %v", err)
	}
	n := s.Requests()
	time.Sleep(50 * time.Millisecond)
	if s.Requests() != n {
		t.Error("the workload runs on after Shutdown")
	}
	if _, err := http.Get(s.URL()); err == nil {
		t.Error("still serving after Shutdown")
	}
}

// Loaded counts the keys loaded, whatever the workload deletes after.
func TestLoadedBeforeWorkload(t *testing.T) {
	srv, err := Start(context.Background(), Config{Addr: "127.0.0.1:0", Name: "s", Keys: []string{"a", "b", "c", "b"},
		Workload: Workload{Kind: "uniform", Threads: 1, Deletes: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	deadline := time.Now().Add(5 * time.Second)
	for srv.Store.Len() == 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if srv.Loaded != 3 || srv.Store.Len() == 3 {
		t.Fatalf("Loaded %d, Len %d", srv.Loaded, srv.Store.Len())
	}
}

// A Listener given to Start is served, and closed when Start fails.
func TestStartListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, Config{Listener: ln, Name: "s", Keys: keys(3), Workload: Workload{Kind: "none"}})
	if s.Addr().String() != ln.Addr().String() {
		t.Errorf("serving on %v, given %v", s.Addr(), ln.Addr())
	}
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Start(context.Background(), Config{Listener: ln2, Name: "s"}); !errors.Is(err, ErrConfig) {
		t.Fatalf("no keys: %v", err)
	}
	if _, err := ln2.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("the listener of a failed Start: %v", err)
	}
}

// Start gives up with ctx's error while it loads the keys (the serve
// command's Ctrl-C), serving nothing: the listener is closed.
func TestStartCancelled(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	loaded := 0.0
	c := Config{Listener: ln, Name: "s", Keys: keys(200_000), Workload: Workload{Kind: "none"},
		Progress: func(f float64) {
			loaded = f
			if f > 0 {
				cancel() // part way through
			}
		}}
	if _, err := Start(ctx, c); !errors.Is(err, context.Canceled) {
		t.Fatalf("Start cancelled during the load: %v", err)
	}
	if loaded == 0 || loaded == 1 {
		t.Errorf("the load reached %v before it stopped; want it stopped part way", loaded)
	}
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("the listener of a cancelled Start: %v", err)
	}
}

// TestBatchFor: a paced thread sends about a hundred batches a second,
// between 1 and workload.BatchSize requests each, for any finite rate.
func TestBatchFor(t *testing.T) {
	for _, c := range []struct {
		rate float64
		want int
	}{
		{0, workload.BatchSize},
		{1, 1},
		{50, 1},
		{20000, 200},
		{1e9, workload.BatchSize},
		{1e300, workload.BatchSize},
		{math.MaxFloat64, workload.BatchSize},
	} {
		if got := batchFor(c.rate); got != c.want {
			t.Errorf("batchFor(%g) = %d, want %d", c.rate, got, c.want)
		}
	}
}

// guardRuns numbers TestServerGuards' runs: expvar names last for the
// process, so a run under -count=N publishes under names of its own.
var guardRuns int

// The server has read, read-header and write timeouts (with a
// read-header timeout alone, one slow reader could hold a connection,
// and the one snapshot a time, for as long as it liked), answers requests
// addressed to loopback and to Hosts only, and leaves the command line
// out of /debug/vars unless Cmdline is set.
func TestServerGuards(t *testing.T) {
	guardRuns++
	for _, cmdline := range []bool{false, true} {
		name := "guard" + strconv.Itoa(guardRuns) + "_" + strconv.FormatBool(cmdline)
		s := start(t, Config{Name: name, Keys: keys(10), Workload: Workload{Kind: "none"}, Expvar: true, Cmdline: cmdline, Hosts: []string{"box.lan"}})
		hs := s.http
		if hs.ReadHeaderTimeout <= 0 || hs.ReadTimeout <= 0 || hs.WriteTimeout <= 0 || hs.IdleTimeout <= 0 {
			t.Errorf("timeouts: read header %v, read %v, write %v, idle %v; want all set", hs.ReadHeaderTimeout, hs.ReadTimeout, hs.WriteTimeout, hs.IdleTimeout)
		}
		base := strings.TrimSuffix(s.URL(), "/"+name)
		for host, want := range map[string]int{"": 200, "box.lan": 200, "localhost:1": 200, "attacker.example": http.StatusMisdirectedRequest} {
			req, _ := http.NewRequest("GET", s.URL()+".json", nil)
			if host != "" {
				req.Host = host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("Host %q: %d, want %d", host, resp.StatusCode, want)
			}
		}
		resp, err := http.Get(base + "/debug/vars")
		if err != nil {
			t.Fatal(err)
		}
		var vars map[string]json.RawMessage
		err = json.NewDecoder(resp.Body).Decode(&vars)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := vars["cmdline"]; ok != cmdline {
			t.Errorf("Cmdline %v: /debug/vars has the command line: %v", cmdline, ok)
		}
		if _, ok := vars["twochoice."+name]; !ok || vars["memstats"] == nil {
			t.Errorf("/debug/vars lacks the store or memstats: %d variables", len(vars))
		}
	}
}
