package hashfn

import (
	"errors"
	"testing"
)

func TestKindText(t *testing.T) {
	for _, k := range Kinds() {
		b, err := k.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Kind
		if err := back.UnmarshalText(b); err != nil || back != k {
			t.Fatalf("%v: round trip gave %v, %v", k, back, err)
		}
	}
	if XXHash.String() != "xxhash" || Tabulation.String() != "tabulation" {
		t.Fatalf("names: %q %q", XXHash, Tabulation)
	}
	if _, err := ParseKind("md5"); !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("ParseKind(md5) = %v, want ErrUnknownKind", err)
	}
	if _, err := Kind(9).MarshalText(); !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("Kind(9).MarshalText() = %v", err)
	}
	if _, err := New(Kind(9), 0); !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("New(Kind(9)) = %v", err)
	}
}
