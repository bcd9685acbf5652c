package storehttp

import (
	"encoding/json"
	"errors"
	"expvar"
	"fmt"
	"testing"

	"github.com/twochoice/twochoice/store"
)

// expvarRuns numbers TestPublishExpvar's runs: expvar names last for the
// process, so a run under -count=N publishes under a name of its own.
var expvarRuns int

func TestPublishExpvar(t *testing.T) {
	expvarRuns++
	name := fmt.Sprintf("storehttp-test-%d", expvarRuns)
	s := newStore(t, store.Options{Seed: 8}, 1234)
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
