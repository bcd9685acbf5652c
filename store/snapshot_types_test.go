package store

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Snapshots of types that share a name but not a shape.
//
// A snapshot records its key and value types, and Open matched them by
// name (reflect's String: the package's name and the type's, without the
// package path). Two programs' main.Item, or a type whose fields changed
// between two builds, share that name. The types below are declared
// inside the test functions, so that two of them can have the same name
// (store.Item) and different shapes, as such programs' types do.

// saveTyped saves a store of kv (seed 5) to a fresh file and returns its
// path.
func saveTyped[K comparable, V any](t *testing.T, kv map[K]V) string {
	t.Helper()
	s := newTestStore[K, V](t, Options{Seed: 5})
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

// shapeCase is a snapshot saved as one type and opened as another of the
// same name.
type shapeCase struct {
	name string
	// onMain is what Open did before snapshots recorded their types'
	// shapes: the entries it restored, or the start of its error.
	onMain string
	open   func(t *testing.T) (string, error)
}

// shapeCases are saved as one shape and opened as another. Their types
// are declared in block scopes so that both sides are store.Item (or
// store.Key).
func shapeCases() []shapeCase {
	return []shapeCase{
		{"struct field renamed", "1 entries: a={B:},true", func(t *testing.T) (string, error) {
			type Item struct{ A int }
			p := saveTyped(t, map[string]Item{"a": {7}})
			{
				type Item struct{ B string }
				return openTyped[string, Item](p, "a")
			}
		}},
		{"struct field int to string", "store: snapshot corrupt: a record does not decode", func(t *testing.T) (string, error) {
			type Item struct{ A int }
			p := saveTyped(t, map[string]Item{"a": {7}})
			{
				type Item struct{ A string }
				return openTyped[string, Item](p, "a")
			}
		}},
		{"struct field int to int8", "1 entries: a={A:7},true", func(t *testing.T) (string, error) {
			type Item struct{ A int }
			p := saveTyped(t, map[string]Item{"a": {7}})
			{
				type Item struct{ A int8 }
				return openTyped[string, Item](p, "a")
			}
		}},
		{"struct field int to int8, a value that overflows", "store: snapshot corrupt: a record does not decode", func(t *testing.T) (string, error) {
			type Item struct{ A int }
			p := saveTyped(t, map[string]Item{"a": {700}})
			{
				type Item struct{ A int8 }
				return openTyped[string, Item](p, "a")
			}
		}},
		{"struct field pointer to value", "2 entries: a={P:1},true b={P:0},true", func(t *testing.T) (string, error) {
			type Item struct{ P *int }
			one := 1
			p := saveTyped(t, map[string]Item{"a": {&one}, "b": {nil}})
			{
				type Item struct{ P int }
				return openTyped[string, Item](p, "a", "b")
			}
		}},
		{"named int to named string", "store: snapshot corrupt: a record does not decode", func(t *testing.T) (string, error) {
			type Item int
			p := saveTyped(t, map[string]Item{"a": 7})
			{
				type Item string
				return openTyped[string, Item](p, "a")
			}
		}},
		{"named int to named float32", "1 entries: a=7,true", func(t *testing.T) (string, error) {
			type Item int
			p := saveTyped(t, map[string]Item{"a": 7})
			{
				type Item float32
				return openTyped[string, Item](p, "a")
			}
		}},
		{"slice to shorter array", "1 entries: a=[1],true", func(t *testing.T) (string, error) {
			type Item []int32
			p := saveTyped(t, map[string]Item{"a": {1, 2}})
			{
				type Item [1]int32
				return openTyped[string, Item](p, "a")
			}
		}},
		{"slice element int32 to string", "store: snapshot corrupt: a record does not decode", func(t *testing.T) (string, error) {
			type Item []int32
			p := saveTyped(t, map[string]Item{"a": {1, 2}})
			{
				type Item []string
				return openTyped[string, Item](p, "a")
			}
		}},
		{"map value int to string", "store: snapshot corrupt: a record does not decode", func(t *testing.T) (string, error) {
			type Item map[string]int
			p := saveTyped(t, map[string]Item{"a": {"x": 1}})
			{
				type Item map[string]string
				return openTyped[string, Item](p, "a")
			}
		}},
		{"map to struct", "1 entries: a={X:0},true", func(t *testing.T) (string, error) {
			type Item map[string]int
			p := saveTyped(t, map[string]Item{"a": {"x": 1}})
			{
				type Item struct{ X int }
				return openTyped[string, Item](p, "a")
			}
		}},
		{"key [4]byte to [8]byte", "store: snapshot corrupt: key [1 2 3 4 0 0 0 0] recorded in bucket", func(t *testing.T) (string, error) {
			type Key [4]byte
			p := saveTyped(t, map[Key]int{{1, 2, 3, 4}: 1})
			{
				type Key [8]byte
				return openTyped[Key, int](p, Key{1, 2, 3, 4})
			}
		}},
		{"key int64 to string", "store: snapshot corrupt: a record does not decode", func(t *testing.T) (string, error) {
			type Key int64
			p := saveTyped(t, map[Key]int{1: 1})
			{
				type Key string
				return openTyped[Key, int](p, "1")
			}
		}},
	}
}

// TestOpenShapeMismatch: what Open does with a snapshot of a type of the
// same name and another shape. (On main: entries restored with zero or
// truncated values, or ErrCorrupt for a file that is not damaged.)
func TestOpenShapeMismatch(t *testing.T) {
	for _, tc := range shapeCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.open(t)
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tc.onMain) {
				t.Errorf("Open gave %q, want %q", got, tc.onMain)
			}
		})
	}
}
