package serve

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/twochoice/twochoice/store"
	"github.com/twochoice/twochoice/store/storehttp"
)

// Config is what Start needs.
type Config struct {
	// Addr is the address to listen on, host:port; port 0 picks a free
	// one. Serve on loopback unless the page is meant for others.
	Addr string
	// Listener, if not nil, is served instead of listening on Addr (a
	// caller that listens first learns of a taken port before loading
	// the keys). Start closes it if it fails.
	Listener net.Listener
	// Name is the store's name on the page: /NAME, /NAME.json.
	Name string
	// Keys are loaded into the store before it is served, each with its
	// index as the value.
	Keys []string
	// Store, if not nil, is served instead of a new store of Keys (a
	// store opened from a snapshot, say); Options and Progress are then
	// unused, and the workload asks for Keys, or for the store's keys
	// when Keys is empty. It may be empty only with the workload "none".
	Store Store
	// Snapshots offers the store's snapshot for download, on POST
	// /NAME.snapshot: every key and value.
	Snapshots bool
	// ShowSeed shows the store's hash seed on its page, in its JSON and
	// in expvar (storehttp.Options.ShowSeed): whoever knows it can choose
	// keys that collide.
	ShowSeed bool
	// Hosts are further names or addresses, beyond loopback's and the
	// address listened on, that requests may give as their Host; others
	// get 421 (storehttp.LoopbackOnly).
	Hosts []string
	// Options configure the map built of Keys.
	Options store.MapOptions
	// Workload is run against the store while it is served.
	Workload Workload
	// Expvar also publishes the store in expvar (at /debug/vars, under
	// "twochoice."+Name). A process can publish a name only once.
	Expvar bool
	// Cmdline keeps expvar's "cmdline", the process's command line, in
	// /debug/vars; without it the page leaves it out (varsHandler).
	Cmdline bool
	// Progress, if not nil, is told the fraction of the keys loaded.
	Progress func(frac float64)
}

// The server's timeouts. A client that sends its request or reads the
// answer slowly holds a connection no longer than these; a page of a
// store of a million keys takes about 30 ms to render (BenchmarkPage in
// store/storehttp), and its view less. The snapshot route sets its own
// write deadline for its download, which can be long (storehttp).
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = time.Minute
	idleTimeout       = time.Minute
)

// Store is what serving needs of a store: a *store.Map[string, uint64] or
// a *store.Cache[string, uint64].
type Store interface {
	Get(k string) (uint64, bool)
	Set(k string, v uint64)
	Delete(k string) bool
	Len() int
	All() iter.Seq2[string, uint64]
	Stats() store.Stats
	Report() *store.Report
	Save(path string) error
	SaveContext(ctx context.Context, path string, progress func(done, total uint64)) error
}

var (
	_ Store = (*store.Map[string, uint64])(nil)
	_ Store = (*store.Cache[string, uint64])(nil)
)

// Server is a store being served.
type Server struct {
	Store Store
	// Loaded is the number of entries the store held when the workload
	// started: the keys loaded. Store.Len moves as soon as the workload
	// deletes or inserts.
	Loaded   int
	ln       net.Listener
	http     *http.Server
	served   chan error
	workload *driver
	started  time.Time
	name     string
}

// Start loads the keys, listens, and starts serving and the workload.
// ctx stops the load of the keys, which can take seconds: Start returns
// ctx's error, having served nothing, if ctx is done before it starts
// serving. It has no effect once Start has returned (Shutdown stops the
// server).
func Start(ctx context.Context, c Config) (srv *Server, err error) {
	if c.Listener != nil {
		defer func() {
			if err != nil {
				c.Listener.Close()
			}
		}()
	}
	if c.Store != nil && len(c.Keys) == 0 {
		for k := range c.Store.All() {
			c.Keys = append(c.Keys, k)
		}
		slices.Sort(c.Keys) // the workload's key ranks must not depend on the table's order
	}
	if err := c.Workload.check(); err != nil {
		return nil, err
	}
	// A store given may be empty if nothing is to ask for its keys.
	if len(c.Keys) == 0 && (c.Store == nil || c.Workload.Kind != "none") {
		return nil, fmt.Errorf("%w: no keys", ErrConfig)
	}
	s := c.Store
	if s == nil {
		m, err := store.NewMap[string, uint64](c.Options)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		s = m
		for i, k := range c.Keys {
			s.Set(k, uint64(i))
			if i%65536 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				if c.Progress != nil {
					c.Progress(float64(i) / float64(len(c.Keys)))
				}
			}
		}
		if c.Progress != nil {
			c.Progress(1)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err // stopped during the load, or before Start (a store given)
	}
	opts := &storehttp.Options{Snapshots: c.Snapshots, ShowSeed: c.ShowSeed}
	h := storehttp.NewHandler(opts)
	if err := h.Add(c.Name, s); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	ln := c.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", c.Addr); err != nil {
			return nil, err
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/", h)
	if c.Expvar {
		// Last of the steps that can fail but the workload's, whose
		// configuration was checked: expvar cannot unpublish.
		if err := storehttp.PublishExpvarOptions("twochoice."+c.Name, s, opts); err != nil {
			ln.Close()
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		mux.Handle("/debug/vars", varsHandler(c.Cmdline))
	}
	// Requests must name loopback, the address listened on, or one of
	// Hosts: a web page the user visits reaches a loopback server
	// through DNS rebinding, and would read the store otherwise.
	bound, _, _ := net.SplitHostPort(ln.Addr().String())
	srv = &Server{
		Store: s, ln: ln, served: make(chan error, 1), started: time.Now(), name: c.Name,
		http: &http.Server{
			Handler:           storehttp.LoopbackOnly(mux, append(slices.Clone(c.Hosts), bound)...),
			ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout,
			WriteTimeout: writeTimeout, IdleTimeout: idleTimeout,
		},
	}
	srv.Loaded = s.Len()
	srv.workload, err = startWorkload(c.Workload, s, c.Keys)
	if err != nil {
		ln.Close()
		return nil, err
	}
	go func() { srv.served <- srv.http.Serve(ln) }()
	return srv, nil
}

// URL is the address of the store's page.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/" + s.name }

// Addr is the address listened on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Requests is the number of requests the workload has sent.
func (s *Server) Requests() uint64 { return s.workload.ops.Load() }

// Wait delivers the error that stopped the HTTP server:
// http.ErrServerClosed after Shutdown, anything else if serving failed
// by itself.
func (s *Server) Wait() <-chan error { return s.served }

// Shutdown stops the workload, then the HTTP server: it stops
// accepting, lets the requests in flight finish until ctx is done, and
// closes the connections.
func (s *Server) Shutdown(ctx context.Context) error {
	s.workload.close()
	err := s.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		s.http.Close()
	}
	return err
}
