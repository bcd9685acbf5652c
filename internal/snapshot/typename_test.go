package snapshot

import "testing"

// Names compare without the package paths and local types' counters that
// reflect writes inside a generic type's brackets, and with everything
// else.
func TestSameTypeName(t *testing.T) {
	cases := []struct {
		a, b string
		same bool
	}{
		{"main.Item", "main.Item", true},
		{"main.Item", "store.Item", false},
		{"store.Pair[example.com/a/models.Item]", "store.Pair[example.org/b/models.Item]", true},
		{"store.Pair[example.com/a/models.Item]", "store.Pair[main.Item]", false},
		{"store.Pair[main.L·1]", "store.Pair[main.L·12]", true},
		{"store.Pair[main.L·1]", "store.Pair[main.M·1]", false},
		{"m.G[map[a/b.K]*[]c/d.V·3,func(e/f.X) chan<- g/h.Y]", "m.G[map[b.K]*[]d.V·1,func(f.X) chan<- h.Y]", true},
		{"m.G[map[a/b.K]int]", "m.G[map[a/c.K]int]", false},
		{"m.G[gopkg.in/yaml.v3.Node]", "m.G[yaml.v3.Node]", true},
	}
	for _, tc := range cases {
		if got := SameTypeName(tc.a, tc.b); got != tc.same {
			t.Errorf("SameTypeName(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

// Outside brackets reflect writes no paths: a '/' there (in a tag) counts.
func TestSameTypeNameTags(t *testing.T) {
	if SameTypeName(`struct { X int "json:\"a/x\"" }`, `struct { X int "json:\"b/x\"" }`) {
		t.Error("tags a/x and b/x compare equal")
	}
}
