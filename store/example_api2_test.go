package store_test

import (
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/twochoice/twochoice/store"
)

// Peek reads an entry without counting a Get and without keeping the
// entry cached.
func ExampleCache_Peek() {
	c, err := store.NewCache(store.CacheOptions[string, int]{MaxEntries: 1000})
	if err != nil {
		panic(err)
	}
	c.Set("a", 1)
	v, ok := c.Peek("a")
	fmt.Println(v, ok, c.Stats().Gets)
	c.Get("a")
	fmt.Println(c.Stats().Gets)
	// Output:
	// 1 true 0
	// 1
}

// Values ranges over the values, as Keys over the keys.
func ExampleCache_Values() {
	c, err := store.NewCache(store.CacheOptions[string, int]{MaxEntries: 1000})
	if err != nil {
		panic(err)
	}
	c.Set("a", 1)
	c.Set("b", 2)
	c.Set("c", 3)
	fmt.Println(slices.Sorted(c.Values()))
	// Output:
	// [1 2 3]
}

// SetMaximum changes the bound of a live cache: a lower one evicts by the
// policy, reporting each entry to the deletion listener.
func ExampleCache_SetMaximum() {
	evicted := 0
	c, err := store.NewCache(store.CacheOptions[int, int]{
		MaxEntries: 10_000,
		Seed:       1,
		OnDeletion: func(ev store.DeletionEvent[int, int]) {
			if ev.Cause == store.DeletionEvicted {
				evicted++
			}
		},
	})
	if err != nil {
		panic(err)
	}
	for i := range 10_000 {
		c.Set(i, i)
	}
	if err := c.SetMaximum(1_000); err != nil {
		panic(err)
	}
	fmt.Println(c.Len(), c.Options().MaxEntries)
	fmt.Println(c.Len()+evicted, uint64(evicted) == c.Stats().Evictions)
	fmt.Println(c.SetMaximum(0) != nil)
	// Output:
	// 1000 1000
	// 10000 true
	// true
}

// counter and observer are what a Prometheus counter and histogram
// (prometheus.Counter, prometheus.Observer) have: a recorder written
// against them takes the Prometheus client's metrics as they are, and the
// store depends on no metrics library.
type (
	counter  interface{ Add(float64) }
	observer interface{ Observe(float64) }
)

// promRecorder is a StatsRecorder that feeds Prometheus metrics:
//
//	hits := prometheus.NewCounter(prometheus.CounterOpts{Name: "cache_hits_total"})
//	evictions := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cache_evictions_total"}, []string{"cause"})
//	...
//	rec := promRecorder{hits: hits, misses: misses,
//		evicted: evictions.WithLabelValues("evicted"), expired: evictions.WithLabelValues("expired"),
//		loads: loadSeconds.WithLabelValues("success"), loadFailures: loadSeconds.WithLabelValues("failure")}
//
// Its methods are an atomic add each, as a recorder's must be.
type promRecorder struct {
	hits, misses, evicted, expired counter
	loads, loadFailures            observer // load time, in seconds
}

func (r promRecorder) RecordHits(n int)   { r.hits.Add(float64(n)) }
func (r promRecorder) RecordMisses(n int) { r.misses.Add(float64(n)) }
func (r promRecorder) RecordEviction(cause store.DeletionCause, weight uint32) {
	if cause == store.DeletionExpired {
		r.expired.Add(1)
	} else {
		r.evicted.Add(1)
	}
}
func (r promRecorder) RecordLoadSuccess(d time.Duration) { r.loads.Observe(d.Seconds()) }
func (r promRecorder) RecordLoadFailure(d time.Duration) { r.loadFailures.Observe(d.Seconds()) }

// atomicCounter stands in for a Prometheus counter or histogram here.
type atomicCounter struct{ n atomic.Int64 }

func (c *atomicCounter) Add(float64)     { c.n.Add(1) }
func (c *atomicCounter) Observe(float64) { c.n.Add(1) }

// A StatsRecorder hears of every hit, miss, eviction and load as it
// happens, to feed a metrics library; Stats counts the same events.
func ExampleStatsRecorder() {
	var hits, misses, evicted, expired, loads, failures atomicCounter
	c, err := store.NewCache(store.CacheOptions[int, int]{
		MaxEntries:    1000,
		StatsRecorder: promRecorder{&hits, &misses, &evicted, &expired, &loads, &failures},
	})
	if err != nil {
		panic(err)
	}
	for i := range 3000 {
		c.Set(i, i)
	}
	c.Get(2999)
	c.Get(-1)
	fmt.Println(hits.n.Load(), misses.n.Load(), evicted.n.Load())
	st := c.Stats()
	fmt.Println(st.Hits, st.Misses, st.Evictions)
	// Output:
	// 1 1 2000
	// 1 1 2000
}
