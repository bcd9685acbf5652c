package keyset

import (
	"strings"
	"testing"
)

func TestDebian(t *testing.T) {
	base := debianKeys()
	if len(base) != DebianCount {
		t.Fatalf("the list has %d keys, want DebianCount = %d", len(base), DebianCount)
	}
	for _, n := range []int{1000, DebianCount, 3*DebianCount + 17} {
		keys := Debian(n, 1)
		if len(keys) != n {
			t.Fatalf("Debian(%d) gave %d keys", n, len(keys))
		}
		seen := make(map[string]bool, n)
		for _, k := range keys {
			if k == "" || strings.ContainsAny(k, "\n\r") {
				t.Fatalf("Debian(%d): bad key %q", n, k)
			}
			if seen[k] {
				t.Fatalf("Debian(%d): %q twice", n, k)
			}
			seen[k] = true
		}
	}
	a, b := Debian(5000, 7), Debian(5000, 7)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("the same seed gave different keys at %d: %q and %q", i, a[i], b[i])
		}
	}
	if c := Debian(5000, 8); c[0] == a[0] && c[1] == a[1] && c[2] == a[2] {
		t.Fatalf("seeds 7 and 8 gave the same order")
	}
}
