package storehttp

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twochoice/twochoice/bucket"
	"github.com/twochoice/twochoice/internal/stats"
	"github.com/twochoice/twochoice/store"
)

// pageData is what the store page's template shows, formatted.
type pageData struct {
	Name    string
	Refresh int // seconds between reloads; 0: none
	Auto    []choice
	Self    string // this page, with its refresh
	JSON    string
	// Snapshot is the snapshot route, which the page's form POSTs to, or
	// "" when the store cannot save one or snapshots are off.
	Snapshot string
	Taken    string
	Took     string

	Config, Occupancy, Traffic []row
	Policy                     []row // a cache's eviction policy; none for a map
	Charts                     *charts
	Describe                   string // what the charts compare
	Loads                      []loadRow
	Parts                      []partRow
	Deletes                    string // a note when deletes make the limit a guide
	Colors                     colors
}

// row is one line of a key-value table.
type row struct{ Label, Value, Note string }

// choice is one of the auto-refresh links.
type choice struct {
	Label, Href string
	On          bool
}

type colors struct{ Observed, Fluid, Floor string }

// loadRow is one line of the loads table.
type loadRow struct {
	K                                              int
	Buckets, At, FluidAt, AtLeast, FluidAtLeast, Z string
	// Far marks |z| ≥ 4: further from the limit than chance puts a
	// bucket count once in ten thousand tables.
	Far bool
}

// partRow is one line of the parts table.
type partRow struct {
	Part                                             int
	Range, Buckets, Keys, FluidKeys, Mean, FluidMean string
}

// refreshChoices are the auto-refresh periods the page offers, in seconds.
var refreshChoices = []int{0, 1, 2, 5, 10, 30, 60}

// maxRefresh bounds ?refresh=N.
const maxRefresh = 3600

// parseRefresh reads ?refresh=N: whole seconds, 0 (or absent, or empty)
// for none. It reads the raw query pair by pair rather than through
// r.URL.Query(), which drops a pair it cannot decode ("refresh=%zz",
// "refresh=5;x=1") and so would show such a page with no refresh instead
// of saying the value is bad. Every value of a repeated refresh must be
// good; the first is used, as url.Values.Get would.
func parseRefresh(r *http.Request) (int, error) {
	n, set := 0, false
	for pair := range strings.SplitSeq(r.URL.RawQuery, "&") {
		k, raw, _ := strings.Cut(pair, "=")
		if k, err := url.QueryUnescape(k); err != nil || k != "refresh" {
			continue
		}
		q, err := url.QueryUnescape(raw)
		if err != nil {
			q = raw // for the message
		}
		if q == "" && err == nil {
			set = true
			continue
		}
		i, aerr := strconv.Atoi(q)
		if err != nil || aerr != nil || i < 0 || i > maxRefresh {
			return 0, fmt.Errorf("storehttp: refresh=%q: want whole seconds from 0 (off) to %d", q, maxRefresh)
		}
		if !set {
			n, set = i, true
		}
	}
	return n, nil
}

func (h *Handler) servePage(w http.ResponseWriter, r *http.Request, src *source) {
	refresh, err := parseRefresh(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	start := time.Now()
	v := src.view()
	if v == nil {
		http.Error(w, "storehttp: the store failed while being measured", http.StatusInternalServerError)
		return
	}
	viewed := time.Now()
	draw := func() ([]byte, error) {
		var b bytes.Buffer
		err := pageTemplate.ExecuteTemplate(&b, "page", h.pageData(v, refresh))
		return b.Bytes(), err
	}
	var page []byte
	if slices.Contains(refreshChoices, refresh) {
		page, err = v.render("page?refresh="+strconv.Itoa(refresh), draw)
	} else {
		// Only the periods the page offers are kept with the view; any
		// other is drawn for its request alone. Kept, ?refresh=0 to 3600
		// made one view hold 3601 pages: 200 MB for a 40 KB page, for as
		// long as the view is shown (MaxAge).
		page, err = draw()
	}
	if err != nil {
		http.Error(w, "storehttp: "+err.Error(), http.StatusInternalServerError)
		return
	}
	writeHTML(w, page, viewed.Sub(start), time.Since(viewed))
}

// writeHTML sends a page, with the time spent getting its view (waiting
// for a shared one included) and rendering it in a Server-Timing header,
// which browsers' developer tools show.
func writeHTML(w http.ResponseWriter, page []byte, view, render time.Duration) {
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	// Nothing to fetch and nothing to run: the page is its own markup,
	// inline SVG and one style sheet.
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
	hd.Set("Server-Timing", fmt.Sprintf("view;dur=%.2f, render;dur=%.2f",
		float64(view.Microseconds())/1000, float64(render.Microseconds())/1000))
	hd.Set("Content-Length", strconv.Itoa(len(page))) // for HEAD too, which has no body
	w.Write(page)
}

func (h *Handler) pageData(v *view, refresh int) *pageData {
	r, st := v.load, v.stats
	d := &pageData{
		Name:    v.name,
		Refresh: refresh,
		Self:    pageLink(v.name, refresh),
		JSON:    v.name + jsonSuffix,
		Taken:   v.taken.UTC().Format("2006-01-02 15:04:05.000 UTC"),
		Took:    millis(v.took),
		Charts:  v.getCharts(),
		Colors:  colors{cssColor(observedColor), cssColor(fluidColor), cssColor(floorColor)},
	}
	for _, s := range refreshChoices {
		label := "off"
		if s > 0 {
			label = strconv.Itoa(s) + " s"
		}
		d.Auto = append(d.Auto, choice{label, pageLink(v.name, s), s == refresh})
	}
	if h.canSave(v.name) {
		d.Snapshot = v.name + snapshotSuffix
	}

	bound := "unbounded: the table grows"
	if v.load.MaxEntries > 0 {
		bound = count(uint64(v.load.MaxEntries)) + " entries at most"
	}
	d.Config = []row{
		{"placement", r.Placement.String(), placementNotes[r.Placement]},
		{"choices (d)", strconv.Itoa(r.Choices), "candidate buckets per key"},
		{"bucket size (C)", strconv.Itoa(r.BucketSize), "slots per bucket"},
		{"hash", r.Hash.String(), ""},
		h.seedRow(r.Seed),
		{"table size (n)", count(uint64(r.Buckets)) + " buckets", count(uint64(r.Buckets*r.BucketSize)) + " slots"},
		{"size limit", bound, ""},
	}

	stash := row{"stash", count(uint64(r.Stash)) + " keys", "whose candidates were all full"}
	if r.FluidShareAtLeast != nil {
		stash.Note = "the fluid limit predicts " + decimal(r.FluidStash, 2)
	}
	growing := "no"
	if st.Growing {
		growing = "yes: keys are moving to a bigger table"
	}
	d.Occupancy = []row{
		{"entries", count(uint64(r.Entries)), ""},
		{"utilization", percent(r.Utilization), "the table grows at " + percent(r.MaxUtilization)},
		{"mean load", decimal(r.MeanLoad, 3), "keys per bucket"},
		{"max load", strconv.Itoa(r.MaxLoad), "keys in the fullest bucket"},
		stash,
		{"growing", growing, ""},
	}
	d.Traffic = statRows(st)
	d.Policy = policyRows(v.policy)

	d.Describe = fmt.Sprintf("%s with d = %d, buckets of %d and %s keys per bucket", r.Placement, r.Choices, r.BucketSize, decimal(float64(r.Entries)/float64(max(r.Buckets, 1)), 3))
	for k := range r.Histogram {
		row := loadRow{K: k, Buckets: count(r.Histogram[k]), At: percent(share(r.Histogram[k], r.Buckets)),
			AtLeast: shareText(at(r.ShareAtLeast, k)), FluidAt: "–", FluidAtLeast: "–"}
		if r.FluidShareAtLeast != nil {
			f := at(r.FluidShareAtLeast, k)
			row.FluidAt = percent(atLoad(r.FluidShareAtLeast, k))
			row.FluidAtLeast = shareText(f)
			if sd := stats.BinomialSigma(r.Buckets, f); sd > 0 {
				z := (at(r.ShareAtLeast, k) - f) * float64(r.Buckets) / sd
				row.Z = strconv.FormatFloat(z, 'f', 1, 64)
				if math.Abs(z) < 0.05 {
					row.Z = "0.0" // not "-0.0"
				}
				row.Far = math.Abs(z) >= 4
			}
		}
		d.Loads = append(d.Loads, row)
	}
	d.Parts = partRows(r)
	if r.Deletes > 0 {
		d.Deletes = fmt.Sprintf("This store has seen %s deletes. The fluid limit describes keys that arrive and stay; deleted keys leave holes the rule did not choose, so here it is a guide rather than a prediction.", count(r.Deletes))
	}
	return d
}

// seedRow shows the hash seed, or says why it is not shown.
func (h *Handler) seedRow(seed uint64) row {
	if h.showSeed {
		return row{"seed", strconv.FormatUint(seed, 10), ""}
	}
	return row{"seed", "hidden", "whoever knows it can choose keys that collide"}
}

func pageLink(name string, refresh int) string {
	if refresh == 0 {
		return name
	}
	return name + "?refresh=" + strconv.Itoa(refresh)
}

// placementNotes say what each rule does, in a line.
var placementNotes = map[bucket.Placement]string{
	bucket.OneChoice:  "one candidate per key: the baseline",
	bucket.DChoice:    "the least loaded of d candidates; ties by a coin",
	bucket.Halves:     "one candidate in each of d parts, the least loaded wins; ties by a coin",
	bucket.GoLeft:     "Vöcking's go-left: one candidate per part, the least loaded wins; ties go left",
	bucket.DoubleHash: "d candidates f + k·g mod n, the least loaded wins; ties by a coin",
}

// partRows describes each part under Halves and GoLeft; nil with one
// part.
func partRows(r *store.Report) []partRow {
	if len(r.Parts) < 2 {
		return nil
	}
	var keys, fluidKeys float64
	for _, p := range r.Parts {
		keys += float64(p.Entries)
		fluidKeys += p.FluidMeanLoad * float64(p.Buckets)
	}
	var rows []partRow
	first := 0
	for j, p := range r.Parts {
		pr := partRow{
			Part:      j,
			Range:     fmt.Sprintf("%s – %s", count(uint64(first)), count(uint64(first+p.Buckets-1))),
			Buckets:   count(uint64(p.Buckets)),
			Keys:      percent(safeDiv(float64(p.Entries), keys)),
			Mean:      decimal(p.MeanLoad, 3),
			FluidKeys: "–", FluidMean: "–",
		}
		if p.FluidShareAtLeast != nil && fluidKeys > 0 {
			pr.FluidKeys = percent(safeDiv(p.FluidMeanLoad*float64(p.Buckets), fluidKeys))
			pr.FluidMean = decimal(p.FluidMeanLoad, 3)
		}
		rows = append(rows, pr)
		first += p.Buckets
	}
	return rows
}

func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// policyRows lists a cache's eviction policy: the setting in use, the
// evidence, and the last change; nothing for p nil (a map).
func policyRows(p *store.PolicyState) []row {
	if p == nil {
		return nil
	}
	reloc := "no"
	if p.Relocating {
		reloc = "yes"
	}
	best, bestLead := "", math.Inf(-1)
	for _, m := range p.Miniatures {
		if m.Ranking != p.Ranking && m.Lead > bestLead {
			best, bestLead = m.Ranking, m.Lead
		}
	}
	rankNote, takeOver := "how eviction candidates are scored", fmt.Sprintf("it takes over past %.0f", p.Bar)
	if p.Pinned {
		rankNote, takeOver = "pinned by CacheOptions.Ranking: the cache does not move", "the ranking is pinned"
	}
	rows := []row{
		{"ranking", p.Ranking, rankNote},
		{"prior", p.Prior, "the gap a key's first use is blended from"},
		{"relocating", reloc, fmt.Sprintf("the relocating miniature leads by %.1f", p.RelocationLead)},
		{"miniatures", fmt.Sprintf("%d entries", p.MiniatureEntries), fmt.Sprintf("replaying 1 key in %d: %s sampled gets", p.SampleRate, count(p.SampledGets))},
	}
	if best != "" {
		rows = append(rows, row{"closest challenger", best, fmt.Sprintf("leads by %.1f; %s", bestLead, takeOver)})
	}
	changes := row{"changes", count(p.ChangesTotal), "none yet"}
	if n := len(p.Changes); n > 0 {
		c := p.Changes[n-1]
		changes.Note = fmt.Sprintf("the last: %s %s → %s at get %s", c.Kind, c.From, c.To, count(c.Gets))
	}
	return append(rows, changes)
}

// statOrder names and orders the counters of store.Stats on the page.
// Fields shown elsewhere on the page have no label. A field of store.Stats
// missing here (a counter added to the store later) is still shown, after
// these, under its JSON name: one line here gives it a label and a place.
var statOrder = []struct{ field, label string }{
	{"Gets", "gets"},
	{"Hits", "hits"},
	{"Misses", "misses"},
	{"Sets", "sets"},
	{"Deletes", "deletes"},
	{"Evictions", "evictions"},
	{"Expirations", "expirations"},
	{"Relocations", "relocations"},
	{"Grows", "growths"},
	{"Rekeys", "re-keys"},
	{"Refreshes", "refreshes"},
	{"RefreshFailures", "failed refreshes"},
	{"LoadSuccesses", "loads"},
	{"LoadFailures", "failed loads"},
	{"LoadTime", "load time (ns)"},
	{"Entries", ""}, // in Occupancy, from the load report
	{"Buckets", ""}, // in Configuration
	{"Stash", ""},   // in Occupancy
	{"Growing", ""}, // in Occupancy
}

// statRows lists the counters of st, with the hit ratio after the misses.
func statRows(st store.Stats) []row {
	ratio := row{Label: "hit ratio", Value: "–", Note: "no gets yet"}
	if st.Gets > 0 {
		ratio = row{Label: "hit ratio", Value: percent(st.HitRatio()), Note: "hits / gets"}
	}
	return counterRows(reflect.ValueOf(st), ratio)
}

// counterRows lists the fields of the struct v in statOrder's order and
// then the others, with ratio after the misses. It reads any struct, so
// that a test can show that a counter store.Stats gains later (evictions,
// say) appears on the page.
func counterRows(v reflect.Value, ratio row) []row {
	t := v.Type()
	var rows []row
	done := map[string]bool{}
	add := func(f reflect.StructField, label string) {
		done[f.Name] = true
		if label == "" {
			return
		}
		rows = append(rows, row{Label: label, Value: fieldText(v.FieldByIndex(f.Index))})
		if f.Name == "Misses" {
			rows = append(rows, ratio)
		}
	}
	for _, o := range statOrder {
		if f, ok := t.FieldByName(o.field); ok {
			add(f, o.label)
		}
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || done[f.Name] {
			continue
		}
		label, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if label == "" || label == "-" {
			label = f.Name
		}
		add(f, strings.ReplaceAll(label, "_", " "))
	}
	return rows
}

// fieldText formats one counter.
func fieldText(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			return "yes"
		}
		return "no"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n := v.Int(); n < 0 {
			return "-" + count(uint64(-n))
		}
		return count(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return count(v.Uint())
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', 4, 64)
	}
	return fmt.Sprint(v.Interface())
}
