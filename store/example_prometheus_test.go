package store_test

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/twochoice/twochoice/store"
)

// metric is one sample for a monitoring system.
type metric struct {
	name, help string
	counter    bool     // only grows; otherwise a gauge
	labels     []string // name, value, name, value, …
	value      float64
}

// storeMetrics turns a store's Stats and Load report into samples: what a
// Prometheus collector's Collect sends. Load costs O(buckets), so a
// scrape every few seconds is fine and one per request is not.
func storeMetrics(name string, st store.Stats, r *store.Report, emit func(metric)) {
	l := []string{"store", name}
	for _, c := range []struct {
		name, help string
		v          uint64
	}{
		{"twochoice_gets_total", "Gets: hits and misses.", st.Gets},
		{"twochoice_hits_total", "Gets that found their key.", st.Hits},
		{"twochoice_misses_total", "Gets that did not.", st.Misses},
		{"twochoice_sets_total", "Calls to Set.", st.Sets},
		{"twochoice_deletes_total", "Deletes that removed a key.", st.Deletes},
		{"twochoice_grows_total", "Growths of the table.", st.Grows},
	} {
		emit(metric{c.name, c.help, true, l, float64(c.v)})
	}
	emit(metric{"twochoice_entries", "Keys in the store.", false, l, float64(r.Entries)})
	emit(metric{"twochoice_buckets", "Buckets in the table.", false, l, float64(r.Buckets)})
	emit(metric{"twochoice_stash", "Keys whose candidate buckets were all full.", false, l, float64(r.Stash)})
	emit(metric{"twochoice_max_load", "Keys in the fullest bucket.", false, l, float64(r.MaxLoad)})
	for k, n := range r.Histogram {
		emit(metric{"twochoice_buckets_by_load", "Buckets holding k keys.", false, loadLabels(l, k), float64(n)})
	}
	if r.FluidShareAtLeast == nil {
		return // an empty store: nothing to predict
	}
	for k := range r.Histogram {
		next := 0.0
		if k+1 < len(r.FluidShareAtLeast) {
			next = r.FluidShareAtLeast[k+1]
		}
		emit(metric{"twochoice_buckets_by_load_fluid", "Buckets holding k keys, as the fluid limit predicts.",
			false, loadLabels(l, k), (r.FluidShareAtLeast[k] - next) * float64(r.Buckets)})
	}
}

func loadLabels(l []string, k int) []string {
	return append(l[:len(l):len(l)], "load", strconv.Itoa(k))
}

// A Prometheus collector over Stats and Load. The store depends on no
// metrics library; the collector is written with yours. With the
// Prometheus client (github.com/prometheus/client_golang/prometheus) it is
// storeMetrics above and this:
//
//	type collector struct {
//		name string
//		s    *store.Map[int, int]
//	}
//
//	func (c collector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }
//
//	func (c collector) Collect(ch chan<- prometheus.Metric) {
//		storeMetrics(c.name, c.s.Stats(), c.s.Report(), func(m metric) {
//			var names, values []string
//			for i := 0; i+1 < len(m.labels); i += 2 {
//				names, values = append(names, m.labels[i]), append(values, m.labels[i+1])
//			}
//			kind := prometheus.GaugeValue
//			if m.counter {
//				kind = prometheus.CounterValue
//			}
//			desc := prometheus.NewDesc(m.name, m.help, names, nil)
//			ch <- prometheus.MustNewConstMetric(desc, kind, m.value, values...)
//		})
//	}
//
//	prometheus.MustRegister(collector{"sessions", s})
//
// Here the samples are printed instead, one a line, as Prometheus's text
// format writes them.
func Example_prometheus() {
	s, _ := store.NewMap[int, int](store.MapOptions{Seed: 7})
	for i := range 20000 {
		s.Set(i, i)
	}
	s.Get(1)
	s.Get(-1)

	storeMetrics("sessions", s.Stats(), s.Report(), func(m metric) {
		var l []string
		for i := 0; i+1 < len(m.labels); i += 2 {
			l = append(l, fmt.Sprintf("%s=%q", m.labels[i], m.labels[i+1]))
		}
		fmt.Printf("%s{%s} %.6g\n", m.name, strings.Join(l, ","), m.value)
	})
	// Output:
	// twochoice_gets_total{store="sessions"} 2
	// twochoice_hits_total{store="sessions"} 1
	// twochoice_misses_total{store="sessions"} 1
	// twochoice_sets_total{store="sessions"} 20000
	// twochoice_deletes_total{store="sessions"} 0
	// twochoice_grows_total{store="sessions"} 9
	// twochoice_entries{store="sessions"} 20000
	// twochoice_buckets{store="sessions"} 4096
	// twochoice_stash{store="sessions"} 0
	// twochoice_max_load{store="sessions"} 7
	// twochoice_buckets_by_load{store="sessions",load="0"} 0
	// twochoice_buckets_by_load{store="sessions",load="1"} 7
	// twochoice_buckets_by_load{store="sessions",load="2"} 43
	// twochoice_buckets_by_load{store="sessions",load="3"} 212
	// twochoice_buckets_by_load{store="sessions",load="4"} 888
	// twochoice_buckets_by_load{store="sessions",load="5"} 1979
	// twochoice_buckets_by_load{store="sessions",load="6"} 945
	// twochoice_buckets_by_load{store="sessions",load="7"} 22
	// twochoice_buckets_by_load{store="sessions",load="8"} 0
	// twochoice_buckets_by_load_fluid{store="sessions",load="0"} 0.437016
	// twochoice_buckets_by_load_fluid{store="sessions",load="1"} 5.61531
	// twochoice_buckets_by_load_fluid{store="sessions",load="2"} 40.2962
	// twochoice_buckets_by_load_fluid{store="sessions",load="3"} 217.926
	// twochoice_buckets_by_load_fluid{store="sessions",load="4"} 904.146
	// twochoice_buckets_by_load_fluid{store="sessions",load="5"} 1952.32
	// twochoice_buckets_by_load_fluid{store="sessions",load="6"} 944.992
	// twochoice_buckets_by_load_fluid{store="sessions",load="7"} 30.2679
	// twochoice_buckets_by_load_fluid{store="sessions",load="8"} 0.00125481
}
