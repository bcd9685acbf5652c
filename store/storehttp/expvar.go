package storehttp

import (
	"expvar"
	"fmt"
	"sync"
)

// publishMu makes PublishExpvar's check and publish one step, so that two
// calls with one name get an error rather than expvar's panic.
var publishMu sync.Mutex

// PublishExpvar publishes s under name in the expvar package's registry
// (served as JSON at /debug/vars by expvar's handler, which importing
// expvar registers on http.DefaultServeMux). The value is the document of
// GET /NAME.json: the load report's fields, the counters under "stats",
// and when the view was taken; the hash seed is null, as on a Handler
// without Options.ShowSeed. Each read of /debug/vars takes a view of the
// store, O(buckets), at most once per DefaultMaxAge however often it is
// scraped.
//
// It returns an error wrapping ErrName for an empty name or one that
// expvar already has; expvar offers no way to unpublish, so a name stays
// taken for the life of the process.
func PublishExpvar(name string, s Store) error { return PublishExpvarOptions(name, s, nil) }

// PublishExpvarOptions is PublishExpvar with the options of a Handler:
// ShowSeed shows the seed, and MaxAge bounds how often a view is taken as
// it does for a page. Snapshots has no effect. nil Options means the
// defaults.
func PublishExpvarOptions(name string, s Store, o *Options) error {
	if name == "" {
		return fmt.Errorf("%w: empty expvar name", ErrName)
	}
	if s == nil {
		return fmt.Errorf("%w: %q: nil store", ErrName, name)
	}
	maxAge, showSeed := DefaultMaxAge, false
	if o != nil {
		if o.MaxAge != 0 {
			maxAge = o.MaxAge
		}
		showSeed = o.ShowSeed
	}
	publishMu.Lock()
	defer publishMu.Unlock()
	if expvar.Get(name) != nil {
		return fmt.Errorf("%w: expvar %q is already published", ErrName, name)
	}
	src := newSource(name, s, maxAge)
	expvar.Publish(name, expvar.Func(func() any {
		v := src.view()
		if v == nil {
			return nil
		}
		return v.document(showSeed)
	}))
	return nil
}
