// Package storehttp shows running stores over HTTP: a debug page per
// store with its configuration, its counters, a cache's eviction policy
// and its bucket load histogram drawn next to the fluid limit's
// prediction, overall and per part; the same data as JSON; and, on
// request, the same JSON through expvar.
//
//	h := storehttp.NewHandler(nil)
//	h.Add("sessions", sessions) // a *store.Cache[string, Session]
//	h.Add("users", users)       // a *store.Map[uint64, User]
//	mux.Handle("/debug/twochoice/", http.StripPrefix("/debug/twochoice", h))
//
// It is a package apart from store so that a program that uses a store
// but shows no page links no net/http, html/template or expvar (about
// 3 MB of binary for a small program), and so that no program gets
// expvar's /debug/vars on http.DefaultServeMux by importing store.
// Like store, it uses the standard library alone.
//
// # Terms
//
// A view of a store is its Stats and load report (Report), taken one
// after the other. The page, the JSON and
// the expvar value all show a view. The fluid limit is the theory's
// prediction of the share of buckets at each load for the store's rule,
// d, bucket size and keys per bucket (package bucket/fluid); the page
// draws the store's shares next to it. A part is one of the d ranges of
// buckets under the halves and go-left rules.
//
// # Routes
//
// Paths are relative to where the handler is mounted; every link on the
// pages is relative too, so they work under any prefix (strip it with
// http.StripPrefix, as above).
//
//	GET  /                the index: one line per store
//	GET  /NAME            the store's page (HTML); ?refresh=N reloads it every N seconds
//	GET  /NAME.json       the same data as JSON
//	POST /NAME.snapshot   a snapshot file, for stores that can save one (see Saver),
//	                      when Options.Snapshots is set (the page's snapshot button)
//
// HEAD is answered with the status and headers GET would get and no
// body: the handler writes none itself, so a middleware or a
// ResponseRecorder sees none either. A snapshot is taken on POST alone,
// so that nothing that follows or prefetches links runs a Save, and not
// for a POST that a browser says another site's page sent (403
// Forbidden; see http.CrossOriginProtection). Other methods get 405
// Method Not Allowed, an unknown store 404 Not Found, as does
// /NAME.snapshot whatever the method when Options.Snapshots is not set,
// and a bad ?refresh (any value of it that is not whole seconds from 0,
// none, to 3600) 400 Bad Request. Pages and JSON carry their
// Content-Length, HEAD's too. Responses say Cache-Control: no-store;
// pages carry a Server-Timing header with the time spent getting the
// view and rendering, and a Content-Security-Policy that lets them load
// nothing at all: no script, no font, no image but inline SVG. The
// snapshot's download sets its own write deadline (see
// http.ResponseController): none while the store saves, then 30 s plus a
// second per MiB of the file.
//
// # JSON
//
// GET /NAME.json returns one object: the load report's fields under the
// names the inspect command uses for a snapshot (entries, buckets,
// bucket_size, placement, choices, hash, seed, histogram, stash, max_load,
// share_at_least, fluid_share_at_least; seed is null unless
// Options.ShowSeed is set) and its others (fluid_stash,
// mean_load, utilization, max_utilization, parts, deletes); name, time
// (RFC 3339, when the view was taken), view_ms and max_entries; and
// "stats": the fields of store.Stats with hit_ratio (null before the first
// Get). Counters that store.Stats gains later appear in it, and on the
// page, with no change here. A cache's object also has "policy", its
// store.PolicyState: the eviction ranking, prior and relocation in use,
// the miniatures' hit ratios and leads, and the last changes.
//
// # Cost
//
// Taking a view adds up the store's counters (Stats, O(stripes)), visits
// the table once, bucket by bucket (Report), and solves the fluid limit:
// O(buckets), with no store-wide pause, about 15 ms for a million keys
// (BenchmarkPage). Report keeps a map's table from growing while it
// counts (keys that find their candidates full go to the stash
// meanwhile), so views are shared: a view younger than Options.MaxAge
// (1 s by default) is shown again, and requests that arrive while one is
// being taken wait for it; the page (with each refresh period it offers)
// and the JSON are rendered once per view too. However many people or
// scrapers look, a store is measured at most once per MaxAge, a burst of
// page loads costs one view, and a page shown again is a copy of bytes. The page says when
// its view was taken.
//
// # Caveats
//
//   - The page shows counts, never keys or values; a snapshot holds
//     them all, which is why its route is off unless asked for.
//   - The hash seed is hidden unless asked for (Options.ShowSeed): it
//     tells where every key goes, and so which keys collide.
//   - Serve the handler where only operators can reach it: it names the
//     stores and their traffic. On loopback, wrap it in LoopbackOnly:
//     any web page its user visits can otherwise read it through DNS
//     rebinding. Give the server read and write timeouts; the snapshot
//     route lifts the write deadline for its download and sets its own.
//   - A view is consistent bucket by bucket, not across the table:
//     entries set or deleted while it is taken may or may not be in it,
//     and the counters and the report are taken one after the other.
package storehttp
