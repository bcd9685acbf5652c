package store

import (
	"reflect"
	"testing"
	"time"
)

type rtInner struct{ I int }

// RTEmbedded is exported: the codec cannot set an unexported embedded pointer.
type RTEmbedded struct{ I int }

// rtHidden has unexported fields only: it saves as an empty map.
type rtHidden struct {
	a, b int //lint:ignore U1000 unexported fields, which the codec does not save
}

type rtTree struct {
	Kids  []rtTree
	ByKey map[string]*rtTree
}

type rtAlias = rtInner

type rtKey struct{ A, B int32 }

// Types of every kind the shapes describe come back from their own
// snapshot: no legitimate save and open is refused.
func TestOpenShapesRoundTrip(t *testing.T) {
	type Item struct {
		//lint:ignore U1000 read by the codec, through reflection
		_struct bool `codec:",omitempty"`
		*RTEmbedded
		Hidden rtHidden
		Name   string  `codec:"name,omitempty"`
		J      float64 `json:",omitempty"`
		Arr    [2]rtInner
		ByKey  map[rtKey]rtAlias
		Anon   struct{ X, Y []byte }
		When   time.Time
		Took   time.Duration
		Tree   rtTree
		Box    shapeBox[rtInner]
		Boxes  []shapeBox[shapeBox[time.Time]]
	}
	v := Item{RTEmbedded: &RTEmbedded{I: 1}, Name: "n", J: 2, Arr: [2]rtInner{{3}, {4}}, ByKey: map[rtKey]rtAlias{{1, 2}: {5}},
		When: time.Unix(7, 0).UTC(), Took: time.Second, Tree: rtTree{Kids: []rtTree{{}}, ByKey: map[string]*rtTree{"k": {}}},
		Box: shapeBox[rtInner]{rtInner{6}}}
	v.Anon.X = []byte("x")
	p := saveTyped(t, map[string]Item{"a": v})
	s, err := Open[string, Item](p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := s.Get("a"); !ok || got.I != 1 || got.Name != "n" || got.ByKey[rtKey{1, 2}].I != 5 || !got.When.Equal(v.When) ||
		got.Took != time.Second || len(got.Tree.Kids) != 1 || got.Box.V.I != 6 || !reflect.DeepEqual(got.Arr, v.Arr) {
		t.Fatalf("got %+v, %v; want %+v", got, ok, v)
	}
	if _, err := Open[string, *Item](p, nil); err == nil {
		t.Fatal("opened Item as *Item")
	}
}
