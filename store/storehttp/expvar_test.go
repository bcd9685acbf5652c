package storehttp

import (
	"encoding/json"
	"errors"
	"expvar"
	"fmt"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/store"
)

// expvarRuns numbers TestPublishExpvar's runs: expvar names last for the
// process, so a run under -count=N publishes under a name of its own.
var expvarRuns int

func TestPublishExpvar(t *testing.T) {
	expvarRuns++
	name := fmt.Sprintf("storehttp-test-%d", expvarRuns)
	s := newStore(t, store.MapOptions{Seed: 8}, 1234)
	if err := PublishExpvar(name, s); err != nil {
		t.Fatal(err)
	}
	v := expvar.Get(name)
	if v == nil {
		t.Fatal("not published")
	}
	var doc struct {
		Name      string `json:"name"`
		Entries   int    `json:"entries"`
		Histogram []int  `json:"histogram"`
		Stats     struct {
			Sets uint64 `json:"sets"`
		} `json:"stats"`
	}
	if err := json.Unmarshal([]byte(v.String()), &doc); err != nil {
		t.Fatalf("%v: %s", err, v.String())
	}
	if doc.Name != name || doc.Entries != 1234 || len(doc.Histogram) != 9 || doc.Stats.Sets != 1234 {
		t.Errorf("published %+v", doc)
	}
	if err := PublishExpvar(name, s); !errors.Is(err, ErrName) {
		t.Errorf("second publish: %v", err)
	}
	if err := PublishExpvar("", s); !errors.Is(err, ErrName) {
		t.Errorf("empty name: %v", err)
	}
	if err := PublishExpvar("storehttp-nil", nil); !errors.Is(err, ErrName) {
		t.Errorf("nil store: %v", err)
	}
	// A name expvar has from elsewhere is taken too: an error, not
	// expvar's panic.
	other := name + "-other"
	expvar.NewInt(other)
	if err := PublishExpvar(other, s); !errors.Is(err, ErrName) {
		t.Errorf("name taken by another var: %v", err)
	}
}

// The hash seed is hidden unless asked for, on the page, in the JSON (as
// null) and in expvar: it tells where every key goes, and so which keys
// collide. ShowSeed shows it in all three.
func TestSeedHidden(t *testing.T) {
	const seed = 987654321
	s := newStore(t, store.MapOptions{Seed: seed}, 100)
	expvarRuns++
	for _, show := range []bool{false, true} {
		o := &Options{ShowSeed: show}
		h := NewHandler(o)
		h.Add("s", s)
		name := fmt.Sprintf("storehttp-seed-%d-%v", expvarRuns, show)
		if err := PublishExpvarOptions(name, s, o); err != nil {
			t.Fatal(err)
		}
		page := serve(h, "GET", "/s").Body.String()
		config := parsePage(t, page).byID(t, "configuration").text.String()
		if strings.Contains(page, "987654321") != show || strings.Contains(config, "hidden") == show {
			t.Errorf("ShowSeed %v: the page's configuration says %q", show, config)
		}
		for what, doc := range map[string]string{"JSON": serve(h, "GET", "/s.json").Body.String(), "expvar": expvar.Get(name).String()} {
			var m map[string]any
			if err := json.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			v, ok := m["seed"]
			want := any(nil)
			if show {
				want = float64(seed)
			}
			if !ok || v != want {
				t.Errorf("ShowSeed %v: the %s's seed is %v (present %v), want %v", show, what, v, ok, want)
			}
			if strings.Count(doc, "987654321") != map[bool]int{false: 0, true: 1}[show] {
				t.Errorf("ShowSeed %v: the %s gives the seed %d times", show, what, strings.Count(doc, "987654321"))
			}
		}
	}
	// PublishExpvar, without options, hides it.
	name := fmt.Sprintf("storehttp-seed-%d-plain", expvarRuns)
	if err := PublishExpvar(name, s); err != nil {
		t.Fatal(err)
	}
	if doc := expvar.Get(name).String(); strings.Contains(doc, "987654321") || !strings.Contains(doc, `"seed":null`) {
		t.Errorf("PublishExpvar shows %s", doc)
	}
}
