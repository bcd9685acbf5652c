package snapshot

import (
	"reflect"
	"slices"
	"testing"
)

// Eight types that each point to all eight, as a model's types that link
// to one another do (a user's orders, an order's user, ...).
type (
	web0 struct {
		P0 *web0
		P1 *web1
		P2 *web2
		P3 *web3
		P4 *web4
		P5 *web5
		P6 *web6
		P7 *web7
	}
	web1 struct {
		P0 *web0
		P1 *web1
		P2 *web2
		P3 *web3
		P4 *web4
		P5 *web5
		P6 *web6
		P7 *web7
	}
	web2 struct {
		P0 *web0
		P1 *web1
		P2 *web2
		P3 *web3
		P4 *web4
		P5 *web5
		P6 *web6
		P7 *web7
	}
	web3 struct {
		P0 *web0
		P1 *web1
		P2 *web2
		P3 *web3
		P4 *web4
		P5 *web5
		P6 *web6
		P7 *web7
	}
	web4 struct {
		P0 *web0
		P1 *web1
		P2 *web2
		P3 *web3
		P4 *web4
		P5 *web5
		P6 *web6
		P7 *web7
	}
	web5 struct {
		P0 *web0
		P1 *web1
		P2 *web2
		P3 *web3
		P4 *web4
		P5 *web5
		P6 *web6
		P7 *web7
	}
	web6 struct {
		P0 *web0
		P1 *web1
		P2 *web2
		P3 *web3
		P4 *web4
		P5 *web5
		P6 *web6
		P7 *web7
	}
	web7 struct {
		P0 *web0
		P1 *web1
		P2 *web2
		P3 *web3
		P4 *web4
		P5 *web5
		P6 *web6
		P7 *web7
	}
)

// Sixteen levels of a struct holding two of the next.
type (
	pair0  struct{ A, B pair1 }
	pair1  struct{ A, B pair2 }
	pair2  struct{ A, B pair3 }
	pair3  struct{ A, B pair4 }
	pair4  struct{ A, B pair5 }
	pair5  struct{ A, B pair6 }
	pair6  struct{ A, B pair7 }
	pair7  struct{ A, B pair8 }
	pair8  struct{ A, B pair9 }
	pair9  struct{ A, B pair10 }
	pair10 struct{ A, B pair11 }
	pair11 struct{ A, B pair12 }
	pair12 struct{ A, B pair13 }
	pair13 struct{ A, B pair14 }
	pair14 struct{ A, B pair15 }
	pair15 struct{ A, B int }
)

// A description grows with the type's declarations, not with the paths
// through them: each named type is described once. Described along every
// path, linked types gave descriptions that grow as the factorial of
// their number (eight types: 2.3 MB, saved in every snapshot's metadata;
// nine: 23 MB and a second; eleven: gigabytes), and nested ones
// exponentially in their depth.
func TestDescribeSize(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[web0](), reflect.TypeFor[web5](), reflect.TypeFor[pair0]()} {
		d := Describe(typ)
		if n := len(d.String()); n > 4000 {
			t.Errorf("Describe(%v): %d bytes rendered", typ, n)
		}
		if s := Diff(d, Describe(typ)); s != "" {
			t.Errorf("Describe(%v) differs from itself: %s", typ, s)
		}
	}
	if s := Diff(Describe(reflect.TypeFor[web0]()), Describe(reflect.TypeFor[web1]())); s == "" {
		t.Error("web0 and web1 describe alike")
	}
}

// pathwise returns d as a pathwise description (typedesc.go), which
// version-1 files may hold: a named type in whole wherever it occurs,
// except inside itself (names holds the named types around d).
func pathwise(d *TypeDesc, names []string) *TypeDesc {
	if d.Ref && !slices.Contains(names, d.Name) {
		d = d.whole
	}
	c := *d
	c.whole = nil
	if c.Name != "" && !c.Ref {
		names = append(names, c.Name)
	}
	if c.Key != nil {
		c.Key = pathwise(c.Key, names)
	}
	if c.Elem != nil {
		c.Elem = pathwise(c.Elem, names)
	}
	c.Fields = slices.Clone(c.Fields)
	for i := range c.Fields {
		c.Fields[i].Type = *pathwise(&c.Fields[i].Type, names)
	}
	return &c
}

type descTwice struct {
	A, B descPoint
	N    descNode
	P    *pair12
}

// Files written while only recursion made a reference describe a type
// again wherever it recurs; they match the types they were saved from,
// and differences in them are still found.
func TestDiffPathwise(t *testing.T) {
	old := pathwise(Describe(reflect.TypeFor[struct{ A, B descPoint }]()), nil)
	if want := "struct { A snapshot.descPoint struct { X int32; Y int32 }; B snapshot.descPoint struct { X int32; Y int32 } }"; old.String() != want {
		t.Fatalf("pathwise: %s\nwant %s", old, want)
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[descTwice](), reflect.TypeFor[descItem](), reflect.TypeFor[descNode]()} {
		old := pathwise(Describe(typ), nil)
		if s := Diff(old, Describe(typ)); s != "" {
			t.Errorf("%v, as described pathwise: %s", typ, s)
		}
	}
	old = pathwise(Describe(reflect.TypeFor[descTwice]()), nil)
	old.Fields[1].Type.Fields[1].Type.Kind = "int64"
	if s, want := Diff(old, Describe(reflect.TypeFor[descTwice]())), "field B, field Y: int64 in the file, int32 here"; s != want {
		t.Errorf("a pathwise file with another shape: %q, want %q", s, want)
	}
}
