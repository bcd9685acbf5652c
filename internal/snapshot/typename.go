package snapshot

import (
	"strings"
	"unicode/utf8"
)

// Type names, as compared.
//
// A snapshot names its types with reflect's String (Meta.KeyType,
// ValueType, TypeDesc.Name), which gives a package-level type as the
// package's name and its own ("store.Item"), without the package path.
// An instantiation of a generic type is named with its type arguments in
// brackets, and reflect writes those otherwise: with their whole package
// paths ("store.Pair[example.com/app/models.Item]"), and a type argument
// declared inside a function with a counter that the compiler numbers
// across its package ("store.Pair[main.Item·2]"), so that declaring
// another local type earlier in the package renumbers it. Neither is part
// of the type's shape: the same program rebuilt after an unrelated edit,
// or built from another module path, would have been refused its own
// snapshot. So names are compared as [SameTypeName] does, without those
// paths and counters; the file keeps the names as reflect gave them.

// SameTypeName reports whether the type names a and b (reflect's String)
// are equal once the package paths and the local types' counters inside
// them are removed (see above).
//
// A '/' in a struct tag inside the brackets is taken for a path's too, as
// the same on both sides; a tag outside brackets is compared whole.
func SameTypeName(a, b string) bool {
	return a == b || comparableName(a) == comparableName(b)
}

// comparableName removes from name every package path's directories (up
// to the last '/' of a qualified name: "example.com/app/models.Item"
// becomes "models.Item") and every local type's counter ('·' and the
// digits after it).
func comparableName(name string) string {
	if !strings.Contains(name, "[") || !strings.ContainsAny(name, "/·") {
		return name // no brackets, where reflect writes paths and counters
	}
	out := make([]byte, 0, len(name))
	word := 0 // where the current word (a run between delimiters) starts in out
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		i += size
		switch {
		case r == '·':
			for i < len(name) && '0' <= name[i] && name[i] <= '9' {
				i++
			}
		case r == '/':
			out = out[:word] // a qualified name's directories
		case strings.ContainsRune(" []*(){},;\"\\", r):
			out = utf8.AppendRune(out, r)
			word = len(out)
		default:
			out = utf8.AppendRune(out, r)
		}
	}
	return string(out)
}
