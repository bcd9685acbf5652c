package storehttp

import (
	"sync"
	"time"

	"github.com/twochoice/twochoice/store"
)

// A view is what a page shows of one store: its counters and load report,
// taken one after the other. Stats adds up counter stripes; Report visits
// the table bucket by bucket without stopping the store (see
// store.Map.Report), so a view costs O(buckets) and is consistent bucket
// by bucket, not across the whole table.
type view struct {
	name  string
	stats store.Stats
	load  *store.Report
	// policy is a cache's eviction policy (store.Cache.Policy), nil for
	// a map.
	policy *store.PolicyState
	taken  time.Time     // when taking it began
	took   time.Duration // how long it took

	// The page's charts are drawn once per view, and the page and the
	// JSON rendered once per view and refresh period the page offers
	// (refreshChoices), however many requests show them: a page is then a
	// copy of bytes.
	chartsOnce sync.Once
	charts     *charts
	mu         sync.Mutex
	rendered   map[string][]byte // by what and how (page?refresh=N, JSON)
}

// render returns what draw makes of the view, calling it only the first
// time for each key: a burst of requests for one view renders it once,
// the others waiting the fraction of a millisecond that takes.
func (v *view) render(key string, draw func() ([]byte, error)) ([]byte, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if b, ok := v.rendered[key]; ok {
		return b, nil
	}
	b, err := draw()
	if err != nil {
		return nil, err
	}
	if v.rendered == nil {
		v.rendered = map[string][]byte{}
	}
	v.rendered[key] = b
	return b, nil
}

// source is one named store and its latest view. Requests for the store
// share views: one younger than maxAge is shown again, and one being
// taken is waited for, so that any number of concurrent requests cost
// one visit of the table (and a burst of page loads, one).
type source struct {
	name   string
	s      Store
	maxAge time.Duration // negative: reuse only the view being taken

	mu     sync.Mutex
	last   *view
	taking *call // the view being taken, or nil
}

// call is a view being taken; done is closed when v is set (or left nil
// if taking it panicked).
type call struct {
	done chan struct{}
	v    *view
}

func newSource(name string, s Store, maxAge time.Duration) *source {
	return &source{name: name, s: s, maxAge: maxAge}
}

// view returns a view of the store: the latest if it is fresh enough, the
// one being taken if there is one, or a new one. It returns nil only if
// the store panicked while being viewed (by another request), in which
// case that request's panic is what gets reported.
func (src *source) view() *view {
	src.mu.Lock()
	if v := src.last; v != nil && src.maxAge > 0 && time.Since(v.taken) < src.maxAge {
		src.mu.Unlock()
		return v
	}
	if c := src.taking; c != nil {
		src.mu.Unlock()
		<-c.done
		return c.v
	}
	c := &call{done: make(chan struct{})}
	src.taking = c
	src.mu.Unlock()
	defer func() {
		src.mu.Lock()
		if c.v != nil {
			src.last = c.v
		}
		src.taking = nil
		src.mu.Unlock()
		close(c.done)
	}()
	c.v = src.take()
	return c.v
}

// take measures the store.
func (src *source) take() *view {
	start := time.Now()
	v := &view{name: src.name, taken: start}
	v.stats = src.s.Stats()
	v.load = src.s.Report()
	if p, ok := src.s.(policySource); ok {
		ps := p.Policy()
		v.policy = &ps
	}
	v.took = time.Since(start)
	return v
}

// policySource is what a view reads of a cache's eviction policy: every
// *store.Cache[K, V] has it, whatever K and V.
type policySource interface {
	Policy() store.PolicyState
}
