package storehttp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/twochoice/twochoice/store"
)

// document is the JSON of one store (GET /NAME.json, and the value
// PublishExpvar publishes): the load report's fields at the top level,
// under the names the inspect command uses for a snapshot (entries,
// buckets, bucket_size, placement, choices, hash, seed, histogram, stash,
// max_load, share_at_least, fluid_share_at_least, and the report's
// others; the seed null unless shown), plus the store's name, when the
// view was taken, and its counters under "stats".
type document struct {
	Name string    `json:"name"`
	Time time.Time `json:"time"` // when the view was taken
	// ViewMS is how long taking the view took, in milliseconds.
	ViewMS float64 `json:"view_ms"`
	// MaxEntries is the store's bound (0: unbounded).
	MaxEntries int `json:"max_entries"`
	// Seed stands in for the report's own seed, which it hides (a field
	// outside an embedded struct wins over one inside): the hash seed, or
	// null unless seeds are shown (Options.ShowSeed).
	Seed *uint64 `json:"seed"`
	*store.Report
	Stats statsDocument `json:"stats"`
	// Policy is a cache's eviction policy (store.PolicyState); a map has
	// none.
	Policy *store.PolicyState `json:"policy,omitempty"`
}

// statsDocument is store.Stats with its hit ratio, which is null before
// the first Get.
type statsDocument struct {
	store.Stats
	HitRatio *float64 `json:"hit_ratio"`
}

// document returns the view's JSON document, with the hash seed if
// showSeed is set.
func (v *view) document(showSeed bool) *document {
	d := &document{
		Name:       v.name,
		Time:       v.taken.UTC(),
		ViewMS:     float64(v.took.Microseconds()) / 1000,
		MaxEntries: v.load.MaxEntries,
		Report:     v.load,
		Stats:      statsDocument{Stats: v.stats},
		Policy:     v.policy,
	}
	if showSeed {
		seed := v.load.Seed
		d.Seed = &seed
	}
	if v.stats.Gets > 0 {
		r := v.stats.HitRatio()
		d.Stats.HitRatio = &r
	}
	return d
}

func serveJSON(w http.ResponseWriter, src *source, showSeed bool) {
	v := src.view()
	if v == nil {
		http.Error(w, "storehttp: the store failed while being measured", http.StatusInternalServerError)
		return
	}
	doc, err := v.render("json", func() ([]byte, error) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		err := enc.Encode(v.document(showSeed))
		return b.Bytes(), err
	})
	if err != nil {
		http.Error(w, "storehttp: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(doc))) // for HEAD too, which has no body
	w.Write(doc)
}
