package snapshot

import (
	"reflect"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// FuzzMeta decodes any bytes as a snapshot's metadata record, as Open
// does before anything else reads them (the metadata is not covered by
// the records' checksum, so a damaged or doctored file can say anything
// there), and does with it what readers do: check its claims, render the
// type descriptions (inspect, and Open's ErrTypeMismatch messages) and
// compare them with the descriptions of types of every shape (Open's
// type check). None may panic, and a rendering is no longer than the
// input allows; a description read from a file must match itself, and
// the metadata must encode back to what decodes to the same.
//
//	go test -run '^$' -fuzz '^FuzzMeta$' -fuzzminimizetime 200x ./internal/snapshot
func FuzzMeta(f *testing.F) {
	heres := []*TypeDesc{
		Describe(reflect.TypeFor[string]()),
		Describe(reflect.TypeFor[[]byte]()),
		Describe(reflect.TypeFor[descItem]()),
		Describe(reflect.TypeFor[descNode]()),
		Describe(reflect.TypeFor[map[[2]int]*descPoint]()),
		Describe(reflect.TypeFor[web0]()),
	}
	for _, h := range heres {
		m := sampleMeta(50)
		m.KeyDesc, m.ValueDesc = h, heres[2]
		var b []byte
		if err := codec.NewEncoderBytes(&b, handle).Encode(&m); err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkMetaBytes(t, b, heres)
	})
}

// checkMetaBytes is FuzzMeta's check of one input.
func checkMetaBytes(t testing.TB, b []byte, heres []*TypeDesc) {
	var m Meta
	if err := codec.NewDecoderBytes(b, handle).Decode(&m); err != nil {
		return
	}
	_ = m.check(int64(len(b)) + 1<<20)
	for _, d := range []*TypeDesc{m.KeyDesc, m.ValueDesc} {
		if d == nil {
			continue
		}
		// Each byte of msgpack renders as a few at most: an empty map
		// (1 byte) is a field " ;", an int (at least 1 byte) up to 20
		// digits.
		if s := d.String(); len(s) > 32*len(b)+64 {
			t.Fatalf("a description of %d bytes renders as %d", len(b), len(s))
		}
		if s := Diff(d, d); s != "" {
			t.Fatalf("a description differs from itself: %s", s)
		}
		for _, h := range heres {
			Diff(d, h)
			Diff(h, d)
		}
	}
	var again []byte
	if err := codec.NewEncoderBytes(&again, handle).Encode(&m); err != nil {
		t.Fatalf("decoded metadata does not encode: %v", err)
	}
	var m2 Meta
	if err := codec.NewDecoderBytes(again, handle).Decode(&m2); err != nil {
		t.Fatalf("re-encoded metadata does not decode: %v", err)
	}
	if !reflect.DeepEqual(m, m2) {
		t.Fatalf("metadata changed in a round trip:\n%+v\n%+v", m, m2)
	}
}
