package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/twochoice/twochoice/bench/workload"
	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/internal/cli"
	"github.com/twochoice/twochoice/internal/serve"
	"github.com/twochoice/twochoice/store"
)

func init() {
	register(command{"serve", "load keys into a store and serve its live debug page", runServe})
}

const serveSynopsis = `serve --keys FILE | --snapshot SNAP [--addr 127.0.0.1:8080] [flags]

Loads the keys of FILE (one a line, or the first column of a TSV; Zstandard
files are decompressed; - is standard input) into a store, each with its line number as the
value, or opens a snapshot that "twochoice load" saved (its placement,
choices, bucket size, hash and seed then come from the file), and serves
the store's debug page: its configuration, counters, and
bucket load histogram next to the fluid limit, overall and per part,
refreshed on request. A synthetic workload keeps running against the store
so that the numbers move. Ctrl-C (SIGINT) or SIGTERM stops it cleanly;
before it serves, while it reads and loads the keys, it stops it with
"interrupted" and exit status 1, as it does the other commands.

Pages: / (the index), /NAME (the store), /NAME.json (the same as JSON),
/debug/vars (expvar, without the command line unless --expose-cmdline),
and with --allow-snapshot POST /NAME.snapshot (a snapshot of the store,
every key and value, saved on request: the page's snapshot button). It
listens on loopback unless --addr says otherwise, and answers only
requests addressed to localhost, 127.0.0.1, [::1], --addr's host or a
host of --allow-host; others get 421 Misdirected Request, so that a web
page cannot read the store through DNS rebinding. The hash seed is
hidden on the page and null in the JSON unless --show-seed: whoever
knows it can choose keys that collide.

Examples:
  twochoice serve --keys keys.txt
  twochoice serve --keys keys.txt --placement dchoice --workload uniform --writes 0.5 --rate 0
  twochoice serve --keys trace.keys.zst --addr 127.0.0.1:0 --name oltp
  twochoice serve --keys keys.txt --addr 192.168.1.5:8080 --allow-host box.lan
  twochoice load --keys keys.txt --out keys.snap && twochoice serve --snapshot keys.snap --allow-snapshot`

// shutdownTimeout bounds how long requests in flight may take to finish
// once the server is told to stop.
const shutdownTimeout = 5 * time.Second

func runServe(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", serveSynopsis)
	var (
		keysPath = fs.String("keys", "", "key file: one key a line, or a TSV whose first column is the key; - for standard input")
		snapPath = fs.String("snapshot", "", "a snapshot saved by twochoice load, served instead of --keys")
		addr     = fs.String("addr", "127.0.0.1:8080", "address to listen on; port 0 picks a free one")
		name     = fs.String("name", "", "the store's name in URLs (default: the key or snapshot file's base name up to its first dot, other characters than letters, digits, - and _ made _; stdin for --keys -)")
		opts     = addStoreFlags(fs, 0, "hash seed (0: random); printed on stderr, and shown on the page with --show-seed")
		kind     = fs.String("workload", "zipf", "synthetic requests: zipf, uniform or none")
		zipfS    = fs.Float64("zipf-s", 0.99, "Zipf exponent s: line r of the file is asked for ∝ 1/(r+1)^s")
		writes   = fs.Float64("writes", 0.1, "share of requests that set a key of the file")
		deletes  = fs.Float64("deletes", 0.01, "share of requests that delete one")
		inserts  = fs.Float64("inserts", 0, "share of requests that set a new key, so the store grows")
		threads  = fs.Int("threads", 1, fmt.Sprintf("goroutines sending requests, 1 to %d", serve.MaxThreads))
		rate     = fs.Float64("rate", 20000, "requests per second over all threads; 0: as fast as they go")
		wseed    = fs.Uint64("workload-seed", 1, "seed of the workload's streams")
		quiet    = fs.Bool("quiet", false, "no progress bar")
		snaps    = fs.Bool("allow-snapshot", false, "offer the store's snapshot, every key and value, on POST /NAME.snapshot")
		showSeed = fs.Bool("show-seed", false, "show the hash seed on the page, in its JSON and in /debug/vars")
		cmdline  = fs.Bool("expose-cmdline", false, "keep the command line in /debug/vars")
		hostList = fs.String("allow-host", "", "further Host names or addresses to answer, comma-separated, each alone (any port) or host:port")
	)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	var hosts []string
	if *hostList != "" {
		var err error
		if hosts, err = cli.ParseList("allow-host", *hostList, parseHost); err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
	}
	if err := opts.check(fs); err != nil {
		return err
	}
	if (*keysPath == "") == (*snapPath == "") {
		return fmt.Errorf("%w: give one of --keys FILE and --snapshot SNAP", errUsage)
	}
	source := *keysPath
	if source == "" {
		source = *snapPath
		var conflict []string
		fs.Visit(func(f *flag.Flag) {
			if slices.Contains(storeFlagNames, f.Name) {
				conflict = append(conflict, "--"+f.Name)
			}
		})
		if len(conflict) > 0 {
			return fmt.Errorf("%w: %s: a snapshot brings its own store options", errUsage, strings.Join(conflict, ", "))
		}
	}
	if *name == "" {
		*name = nameOf(workload.InputName(source))
	}
	// Listen before the keys are read: a malformed --addr is a usage
	// error, and a port already taken is best learned before a long load.
	if _, port, err := net.SplitHostPort(*addr); err != nil {
		return fmt.Errorf("%w: --addr %s: %v", errUsage, *addr, err)
	} else if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("%w: --addr %s: %v", errUsage, *addr, err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	o := opts.options()
	if o.Placement == bucket.OneChoice {
		o.Choices = 1
	}
	cfg := serve.Config{
		Listener: ln, Name: *name, Expvar: true, Snapshots: *snaps, ShowSeed: *showSeed, Cmdline: *cmdline, Hosts: hosts,
		Options: o,
		Workload: serve.Workload{Kind: *kind, ZipfS: *zipfS, Writes: *writes, Deletes: *deletes, Inserts: *inserts,
			Threads: *threads, Rate: *rate, Seed: *wseed},
	}

	// Catch Ctrl-C (and SIGTERM) from here on: while the keys are read
	// and loaded it stops the command as it stops the others' long work,
	// with "interrupted" and exit status 1; once serving, it shuts the
	// server down cleanly. It is caught before the "serving" line is
	// printed, so that a script that signals on reading it gets a clean
	// shutdown.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	var bar *cli.Progress
	if *snapPath != "" {
		s, err := openSnapshot(ctx, *snapPath)
		if err == nil && s.Len() == 0 && (*kind == "zipf" || *kind == "uniform") {
			err = fmt.Errorf("snapshot %s holds no keys for the %s workload to ask for; serve it with --workload none", *snapPath, *kind)
		}
		if err != nil {
			ln.Close()
			return interrupted(ctx, err)
		}
		cfg.Store = s
		bar = cli.NewProgress(stderr, "starting", true)
	} else {
		bar = cli.NewProgress(stderr, "reading keys", *quiet)
		keys, err := readKeyFile(ctx, *keysPath, func(f float64) { bar.Update(f, "") })
		bar.Done()
		if err != nil {
			ln.Close()
			return interrupted(ctx, err)
		}
		bar = cli.NewProgress(stderr, "loading   ", *quiet)
		cfg.Keys = keys
		cfg.Progress = func(f float64) { bar.Update(f, "") }
	}
	srv, err := serve.Start(ctx, cfg)
	bar.Done()
	if errors.Is(err, serve.ErrConfig) {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if err != nil {
		return interrupted(ctx, err)
	}
	r := srv.Store.Report()
	fmt.Fprintf(stderr, "loaded %d keys from %s in %s: %s, d = %d, buckets of %d, %s, seed %d\n",
		srv.Loaded, workload.InputName(source), time.Since(start).Round(time.Millisecond), r.Placement, r.Choices, r.BucketSize, r.Hash, r.Seed)
	if !loopback(srv.Addr()) {
		shown := "configuration"
		if *showSeed {
			shown += ", seed"
		}
		shown += " and traffic"
		if *snaps {
			shown += ", and its snapshot every key and value,"
		}
		fmt.Fprintf(stderr, "warning: listening on %s, beyond this machine: the page shows the store's %s to anyone who can reach it\n", srv.Addr(), shown)
	}
	routes := fmt.Sprintf("index /, JSON %s.json, expvar /debug/vars", cfg.Name)
	if *snaps {
		routes += fmt.Sprintf(", snapshot POST %s.snapshot", cfg.Name)
	}
	fmt.Fprintf(stdout, "serving %s (%s); Ctrl-C stops\n", srv.URL(), routes)

	select {
	case err := <-srv.Wait():
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	stop() // a second Ctrl-C kills the process the usual way
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	elapsed := time.Since(start)
	err = srv.Shutdown(sctx)
	fmt.Fprintf(stderr, "stopped: the workload sent %d requests in %s\n", srv.Requests(), elapsed.Round(time.Second))
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}

// openSnapshot opens the snapshot at path for serve, or returns ctx's
// error as soon as ctx is done (Ctrl-C): a map's snapshot, or a cache's.
// Opening takes no context, and takes seconds for millions of keys (5.7 s
// for 5,000,000), which a Ctrl-C should not wait for (untilDone).
func openSnapshot(ctx context.Context, path string) (serve.Store, error) {
	return untilDone(ctx, func() (serve.Store, error) {
		m, err := store.OpenMap[string, uint64](path, nil)
		if err == nil {
			return m, nil
		}
		if !errors.Is(err, store.ErrOptionsMismatch) {
			return nil, err
		}
		c, cerr := store.OpenCache[string, uint64](path, nil)
		if cerr != nil {
			return nil, err
		}
		return c, nil
	})
}

// nameOf makes a store name from a file name: its base up to the first
// dot, with characters a URL segment would need escaped replaced by '_'.
func nameOf(path string) string {
	base, _, _ := strings.Cut(filepath.Base(path), ".")
	b := []byte(base)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "keys"
	}
	return string(b[:min(len(b), 64)])
}

// parseHost reads one item of --allow-host: a host name or address, alone
// or with a port, as a request's Host header gives it.
func parseHost(item string) (string, error) {
	if item == "" || strings.ContainsAny(item, " \t/?#@") {
		return "", fmt.Errorf("%q: want a host name or address, alone or host:port", item)
	}
	return strings.ToLower(item), nil
}

// loopback reports whether a is a loopback address.
func loopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
