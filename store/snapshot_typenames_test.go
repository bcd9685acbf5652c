package store

import (
	"errors"
	"strings"
	"testing"
)

// shapeBox is a generic type for the tests below: reflect names an
// instantiation with its type argument's package path in the brackets,
// and a type argument declared in a function with a counter
// (store.shapeBox[store.L·1]).
type shapeBox[T any] struct{ V T }

// A type argument declared in a function is named with a counter that
// the compiler numbers across the package, so that an unrelated local
// type declared earlier in the file renumbers it: the same type of the
// same shape, in the next build, has another name (store.L·1 becomes
// store.L·2). Two block scopes of one test get two counters, as two
// builds would. The counter is not part of the shape, and a snapshot
// restores across it, as a field's type and as the value type itself.
func TestOpenLocalTypeArgument(t *testing.T) {
	t.Run("field", func(t *testing.T) {
		type L struct{ A int }
		type Item struct{ P shapeBox[L] }
		type saved = Item
		kv := map[string]saved{"x": {P: shapeBox[L]{V: L{A: 3}}}}
		{
			type L struct{ A int }
			type Item struct{ P shapeBox[L] }
			got, err := crossOpen[string, saved, string, Item](t, kv, "x")
			if err != nil || !strings.Contains(got, "x={P:{V:{A:3}}}") {
				t.Fatalf("the same shape, its type argument renumbered: %q, %v", got, err)
			}
		}
	})
	t.Run("value type", func(t *testing.T) {
		type L struct{ A int }
		type saved = shapeBox[L]
		kv := map[string]saved{"x": {V: L{A: 4}}}
		{
			type L struct{ A int }
			got, err := crossOpen[string, saved, string, shapeBox[L]](t, kv, "x")
			if err != nil || !strings.Contains(got, "x={V:{A:4}}") {
				t.Fatalf("the same shape, its type argument renumbered: %q, %v", got, err)
			}
		}
	})
}

// Two types of one name in one value type (here two scopes' Item; two
// packages named models would do the same): a reference by name would
// not say which, so only the first of a name is referred to, and a field
// whose type is the other one in the file and the first one here is
// found.
func TestOpenTwoTypesOfOneName(t *testing.T) {
	type Item struct{ X int }
	type first = Item
	{
		type Item struct{ Y string }
		type V struct {
			A first
			B Item
			C first
		}
		type saved = V
		kv := map[string]saved{"v": {C: first{X: 1}}}
		{
			type V struct {
				A first
				B Item
				C Item
			}
			_, err := crossOpen[string, saved, string, V](t, kv, "v")
			if !errors.Is(err, ErrTypeMismatch) || !strings.Contains(err.Error(), "field C") {
				t.Fatalf("field C of the other Item: %v, want ErrTypeMismatch at field C", err)
			}
		}
	}
}
