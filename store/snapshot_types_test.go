package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twochoice/twochoice/internal/snapshot"
)

// Snapshots of types that share a name but not a shape.
//
// A snapshot records its key and value types' names (reflect's String: the
// package's name and the type's, without the package path), which two
// programs' main.Item, or a type whose fields changed between two builds,
// share; and, since their shapes were recorded too, each type's structure
// (snapshot.TypeDesc). The types below are declared in block scopes, so
// that two of them can have the same name (store.Item, store.Key) and
// different shapes, as such programs' types do; an alias (saved) keeps the
// outer one in reach.

// saveTyped saves a store of kv (seed 5) to a fresh file and returns its
// path.
func saveTyped[K comparable, V any](t *testing.T, kv map[K]V) string {
	t.Helper()
	s := newTestMap[K, V](t, MapOptions{Seed: 5})
	for k, v := range kv {
		s.Set(k, v)
	}
	p := filepath.Join(t.TempDir(), "typed.snap")
	if err := s.Save(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// openTyped opens p as K → V and returns what Open gave: the error, or
// the values of keys.
func openTyped[K comparable, V any](p string, keys ...K) (string, error) {
	s, err := Open[K, V](p, nil)
	if err != nil {
		return "", err
	}
	out := fmt.Sprintf("%d entries:", s.Len())
	for _, k := range keys {
		v, ok := s.Get(k)
		out += fmt.Sprintf(" %v=%+v,%v", k, v, ok)
	}
	return out, nil
}

// crossOpen saves kv as K1 → V1 and opens the file as K2 → V2, returning
// what that gave (openTyped). It checks that the attempt left the file as
// it was and that it still opens as K1 → V1, with kv in it.
func crossOpen[K1 comparable, V1 any, K2 comparable, V2 any](t *testing.T, kv map[K1]V1, keys ...K2) (string, error) {
	t.Helper()
	p := saveTyped(t, kv)
	before, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := openTyped[K2, V2](p, keys...)
	if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
		t.Errorf("opening as %s → %s changed the file", typeName[K2](), typeName[V2]())
	}
	s, err1 := Open[K1, V1](p, nil)
	if err1 != nil {
		t.Fatalf("the file no longer opens as the types it was saved from: %v", err1)
	}
	for k, v := range kv {
		if g, ok := s.Get(k); !ok || !reflect.DeepEqual(g, v) {
			t.Errorf("saved as %s → %s and reopened: %v = %+v, %v; want %+v", typeName[K1](), typeName[V1](), k, g, ok, v)
		}
	}
	return got, err
}

// shapeCase is a snapshot saved as one type and opened as another of the
// same name and another shape.
type shapeCase struct {
	name string
	// onMain is what Open did before snapshots recorded their types'
	// shapes: the entries it restored, or the start of its error (not
	// checked any more; kept as the record of the defect).
	onMain string
	// diff is what the error must say differs.
	diff string
	open func(t *testing.T) (string, error)
}

func shapeCases() []shapeCase {
	return []shapeCase{
		{"struct field renamed", "1 entries: a={B:},true",
			"field 1 (from 1) is A in the file, B here",
			func(t *testing.T) (string, error) {
				type Item struct{ A int }
				type saved = Item
				{
					type Item struct{ B string }
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {7}}, "a")
				}
			}},
		{"struct field int to string", "store: snapshot corrupt: a record does not decode",
			"field A: int in the file, string here",
			func(t *testing.T) (string, error) {
				type Item struct{ A int }
				type saved = Item
				{
					type Item struct{ A string }
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {7}}, "a")
				}
			}},
		{"struct field int to int8", "1 entries: a={A:7},true",
			"field A: int in the file, int8 here",
			func(t *testing.T) (string, error) {
				type Item struct{ A int }
				type saved = Item
				{
					type Item struct{ A int8 }
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {7}}, "a")
				}
			}},
		{"struct field int to int8, a value that overflows", "store: snapshot corrupt: a record does not decode",
			"field A: int in the file, int8 here",
			func(t *testing.T) (string, error) {
				type Item struct{ A int }
				type saved = Item
				{
					type Item struct{ A int8 }
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {700}}, "a")
				}
			}},
		{"struct field pointer to value", "2 entries: a={P:1},true b={P:0},true",
			"field P: *int in the file, int here",
			func(t *testing.T) (string, error) {
				type Item struct{ P *int }
				type saved = Item
				one := 1
				{
					type Item struct{ P int }
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {&one}, "b": {nil}}, "a", "b")
				}
			}},
		{"struct field added", "1 entries: a={A:7 B:0},true",
			"field B only here",
			func(t *testing.T) (string, error) {
				type Item struct{ A int }
				type saved = Item
				{
					type Item struct{ A, B int }
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {7}}, "a")
				}
			}},
		{"struct field tag", "1 entries: a={A:0},true",
			"field 1 (from 1) is A in the file, A `codec:\"x\"` here",
			func(t *testing.T) (string, error) {
				type Item struct{ A int }
				type saved = Item
				{
					type Item struct {
						A int `codec:"x"`
					}
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {7}}, "a")
				}
			}},
		{"named int to named string", "store: snapshot corrupt: a record does not decode",
			"store.Item int in the file, store.Item string here",
			func(t *testing.T) (string, error) {
				type Item int
				type saved = Item
				{
					type Item string
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": 7}, "a")
				}
			}},
		{"named int to named float32", "1 entries: a=7,true",
			"store.Item int in the file, store.Item float32 here",
			func(t *testing.T) (string, error) {
				type Item int
				type saved = Item
				{
					type Item float32
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": 7}, "a")
				}
			}},
		{"slice to shorter array", "1 entries: a=[1],true",
			"store.Item []int32 in the file, store.Item [1]int32 here",
			func(t *testing.T) (string, error) {
				type Item []int32
				type saved = Item
				{
					type Item [1]int32
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {1, 2}}, "a")
				}
			}},
		{"slice element int32 to string", "store: snapshot corrupt: a record does not decode",
			"element: int32 in the file, string here",
			func(t *testing.T) (string, error) {
				type Item []int32
				type saved = Item
				{
					type Item []string
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {1, 2}}, "a")
				}
			}},
		{"map value int to string", "store: snapshot corrupt: a record does not decode",
			"element: int in the file, string here",
			func(t *testing.T) (string, error) {
				type Item map[string]int
				type saved = Item
				{
					type Item map[string]string
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {"x": 1}}, "a")
				}
			}},
		{"map to struct", "1 entries: a={X:0},true",
			"store.Item map[string]int in the file, store.Item struct { X int } here",
			func(t *testing.T) (string, error) {
				type Item map[string]int
				type saved = Item
				{
					type Item struct{ X int }
					return crossOpen[string, saved, string, Item](t, map[string]saved{"a": {"x": 1}}, "a")
				}
			}},
		{"nested struct field", "1 entries: a={In:{A:0}},true",
			"field In: field 1 (from 1) is A in the file, B here",
			func(t *testing.T) (string, error) {
				type In struct{ A int }
				type Item struct{ In In }
				type saved = Item
				kv := map[string]saved{"a": {In{7}}}
				{
					type In struct{ B int }
					type Item struct{ In In }
					return crossOpen[string, saved, string, Item](t, kv, "a")
				}
			}},
		{"key [4]byte to [8]byte", "store: snapshot corrupt: key [1 2 3 4 0 0 0 0] recorded in bucket",
			"store.Key [4]uint8 in the file, store.Key [8]uint8 here",
			func(t *testing.T) (string, error) {
				type Key [4]byte
				type saved = Key
				{
					type Key [8]byte
					return crossOpen[saved, int, Key, int](t, map[saved]int{{1, 2, 3, 4}: 1}, Key{1, 2, 3, 4})
				}
			}},
		{"key int64 to string", "store: snapshot corrupt: a record does not decode",
			"store.Key int64 in the file, store.Key string here",
			func(t *testing.T) (string, error) {
				type Key int64
				type saved = Key
				{
					type Key string
					return crossOpen[saved, int, Key, int](t, map[saved]int{1: 1}, "1")
				}
			}},
	}
}

// A snapshot opened as types of the same names and other shapes is
// ErrTypeMismatch, naming the file, the type and what differs, and the
// file is left as it was. Before shapes were recorded, Open restored
// some of these with zero, truncated or converted values, and called
// others corrupt (onMain).
func TestOpenShapeMismatch(t *testing.T) {
	for _, tc := range shapeCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.open(t)
			if !errors.Is(err, ErrTypeMismatch) {
				t.Fatalf("Open gave %q, %v; want ErrTypeMismatch (on main: %q)", got, err, tc.onMain)
			}
			msg := err.Error()
			if !strings.Contains(msg, ".snap: ") || !strings.Contains(msg, tc.diff) || !strings.Contains(msg, "has another shape than the file's") {
				t.Errorf("error %q; want the file named and %q", msg, tc.diff)
			}
			if !strings.Contains(msg, "store.Item") && !strings.Contains(msg, "store.Key") {
				t.Errorf("error %q does not name the type", msg)
			}
		})
	}
}

// Types of the same name and shape restore, whatever scope or package
// they come from: the package path is not recorded (like the name check,
// which compares the package's name only), so another program's main.Item
// of the same fields and types reads the file. Self-referential types,
// interfaces, functions and channels (described by name) restore too.
func TestOpenSameShape(t *testing.T) {
	t.Run("struct from another scope", func(t *testing.T) {
		type Item struct {
			A int
			B []string `codec:"b"`
			M map[string]*float64
			T time.Time
			D time.Duration
			a int //lint:ignore U1000 an unexported field, not saved
		}
		type saved = Item
		f := 1.5
		kv := map[string]saved{"x": {A: 1, B: []string{"p"}, M: map[string]*float64{"f": &f}, T: time.Unix(5, 0).UTC(), D: time.Second}}
		{
			type Item struct {
				A int
				B []string `codec:"b"`
				M map[string]*float64
				T time.Time
				D time.Duration
				b string //lint:ignore U1000 unexported fields are not compared
			}
			got, err := crossOpen[string, saved, string, Item](t, kv, "x")
			if err != nil || !strings.Contains(got, "x={A:1 B:[p]") {
				t.Fatalf("same shape from another scope: %q, %v", got, err)
			}
		}
	})
	t.Run("recursive type", func(t *testing.T) {
		type Node struct {
			V    int
			Next *Node
		}
		kv := map[string]Node{"a": {V: 1, Next: &Node{V: 2}}}
		p := saveTyped(t, kv)
		got, err := openTyped[string, Node](p, "a")
		if err != nil || !strings.Contains(got, "a={V:1 Next:") {
			t.Fatalf("recursive type: %q, %v", got, err)
		}
	})
	t.Run("interface and func fields", func(t *testing.T) {
		type Item struct {
			X any
			F func() `codec:"-"`
		}
		p := saveTyped(t, map[string]Item{"a": {X: "s"}})
		got, err := openTyped[string, Item](p, "a")
		if err != nil || !strings.Contains(got, "a={X:s") {
			t.Fatalf("interface field: %q, %v", got, err)
		}
	})
}

// asV1 rewrites the metadata of the snapshot at p as builds before the
// shapes wrote it: without them (the shapes' keys are left out of the
// msgpack map when nil, and internal/snapshot's TestMetaShapesAreOptional
// checks that the bytes are then those of the earlier Meta).
func asV1(t *testing.T, p string) {
	t.Helper()
	rewriteMeta(t, p, func(m *snapshot.Meta) { m.KeyDesc, m.ValueDesc = nil, nil }, 0)
}

// A snapshot written before shapes were recorded still opens, checked by
// name alone: as its own types, and (as before) as another shape of the
// same name, which the records decide.
func TestOpenWithoutShapes(t *testing.T) {
	type Item struct{ A int }
	type saved = Item
	p := saveTyped(t, map[string]saved{"a": {7}, "b": {8}})
	asV1(t, p)
	r, err := snapshot.Open(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if m := r.Meta(); m.KeyDesc != nil || m.ValueDesc != nil {
		t.Fatalf("the rewritten file still has shapes: %v, %v", m.KeyDesc, m.ValueDesc)
	}
	r.Close()
	got, err := openTyped[string, saved](p, "a", "b")
	if err != nil || got != "2 entries: a={A:7},true b={A:8},true" {
		t.Fatalf("a file without shapes, as its types: %q, %v", got, err)
	}
	{
		type Item struct{ B int }
		got, err := openTyped[string, Item](p, "a")
		if err != nil || got != "2 entries: a={B:0},true" {
			t.Fatalf("a file without shapes, as another shape of the same name: %q, %v (want it restored, by name, as before)", got, err)
		}
	}
	if _, err := openTyped[string, int](p); !errors.Is(err, ErrTypeMismatch) {
		t.Fatalf("a file without shapes, as another name: %v", err)
	}
}

// A doctored shape (deeply nested, huge, or missing parts) is a type
// mismatch with a message of bounded length, never a panic.
func TestOpenDoctoredShape(t *testing.T) {
	p := saveTyped(t, map[string]int{"a": 1})
	deep := &snapshot.TypeDesc{Kind: "int"}
	for range 400 {
		deep = &snapshot.TypeDesc{Kind: "slice", Elem: deep}
	}
	wide := &snapshot.TypeDesc{Kind: "struct"}
	for i := range 20_000 {
		wide.Fields = append(wide.Fields, snapshot.FieldDesc{Name: fmt.Sprint("F", i), Type: snapshot.TypeDesc{Kind: "string"}})
	}
	for name, d := range map[string]*snapshot.TypeDesc{
		"deep":           deep,
		"wide":           wide,
		"slice, no elem": {Kind: "slice"},
		"map, no key":    {Kind: "map", Elem: &snapshot.TypeDesc{Kind: "int"}},
		"empty":          {},
	} {
		bad := editedCopy(t, p, func(m *snapshot.Meta) { m.ValueDesc = d })
		_, err := Open[string, int](bad, nil)
		if !errors.Is(err, ErrTypeMismatch) || len(err.Error()) > 4500 {
			t.Errorf("%s: %.300v (%d bytes); want ErrTypeMismatch, briefly", name, err, len(fmt.Sprint(err)))
		}
	}
}
