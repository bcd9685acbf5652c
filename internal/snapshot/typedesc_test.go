package snapshot

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

type descPoint struct{ X, Y int32 }

type descEmbedded struct{ E string }

type descItem struct {
	//lint:ignore U1000 read by the codec, through reflection
	_struct bool `codec:",omitempty"`
	descEmbedded
	Name    string `codec:"name"`
	Tags    []string
	Pos     *descPoint `json:"pos"`
	Grid    [2][3]uint8
	Attrs   map[string]any
	When    time.Time
	Skipped int `codec:"-"`
	hidden  int //lint:ignore U1000 an unexported field, which the codec does not save
	Err     error
	F       func(int) bool
}

type descNode struct {
	V    int
	Kids []descNode
	Next *descNode
}

// Known answers: the rendering and the msgpack bytes of a description are
// fixed, so that the files of every build and Go version agree.
func TestDescribeKnownAnswers(t *testing.T) {
	cases := []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[string](), "string"},
		{reflect.TypeFor[[]byte](), "[]uint8"},
		{reflect.TypeFor[map[int64][4]byte](), "map[int64][4]uint8"},
		{reflect.TypeFor[time.Duration](), "time.Duration int64"},
		{reflect.TypeFor[any](), "interface {}"},
		{reflect.TypeFor[descItem](), "snapshot.descItem struct { _struct bool `codec:\",omitempty\"`; snapshot.descEmbedded struct { E string }; " +
			"Name string `codec:\"name\"`; Tags []string; Pos *snapshot.descPoint struct { X int32; Y int32 } `json:\"pos\"`; " +
			"Grid [2][3]uint8; Attrs map[string]interface {}; When time.Time struct {}; Err error; F func(int) bool }"},
		{reflect.TypeFor[descNode](), "snapshot.descNode struct { V int; Kids []snapshot.descNode; Next *snapshot.descNode }"},
	}
	for _, tc := range cases {
		if got := Describe(tc.typ).String(); got != tc.want {
			t.Errorf("Describe(%v) = %s\nwant %s", tc.typ, got, tc.want)
		}
	}
	var b []byte
	if err := codec.NewEncoderBytes(&b, handle).Encode(Describe(reflect.TypeFor[map[string]descPoint]())); err != nil {
		t.Fatal(err)
	}
	const want = "83a4656c656d83a66669656c64739282a46e616d65a158a47479706581a46b696e64a5696e74333282a46e616d65a159" +
		"a47479706581a46b696e64a5696e743332a46b696e64a6737472756374a46e616d65b2736e617073686f742e64657363506f696e74" +
		"a36b657981a46b696e64a6737472696e67a46b696e64a36d6170"
	if got := hex.EncodeToString(b); got != want {
		t.Errorf("encoded description:\n%s\nwant\n%s", got, want)
	}
}

// Diff says where two shapes differ, and nothing for equal ones.
func TestDiff(t *testing.T) {
	cases := []struct {
		file, here reflect.Type
		want       string
	}{
		{reflect.TypeFor[descItem](), reflect.TypeFor[descItem](), ""},
		{reflect.TypeFor[descNode](), reflect.TypeFor[descNode](), ""},
		{reflect.TypeFor[struct {
			X int
			S []descPoint
		}](), reflect.TypeFor[struct {
			X int
			S []struct{ X, Y int32 }
		}](), "field S, element: snapshot.descPoint struct { X int32; Y int32 } in the file, struct { X int32; Y int32 } here"},
		{reflect.TypeFor[map[string]int](), reflect.TypeFor[map[int]int](), "map key: string in the file, int here"},
		{reflect.TypeFor[*int](), reflect.TypeFor[*uint](), "pointer target: int in the file, uint here"},
		{reflect.TypeFor[[2]int](), reflect.TypeFor[[3]int](), "[2]int in the file, [3]int here"},
		{reflect.TypeFor[struct{ X int }](), reflect.TypeFor[struct {
			X int `codec:"x"`
		}](), "field 1 (from 1) is X in the file, X `codec:\"x\"` here"},
		{reflect.TypeFor[struct{ X int }](), reflect.TypeFor[struct{}](), "field X only in the file"},
		{reflect.TypeFor[any](), reflect.TypeFor[error](), "interface {} in the file, error here"},
	}
	for _, tc := range cases {
		if got := Diff(Describe(tc.file), Describe(tc.here)); got != tc.want {
			t.Errorf("Diff(%v, %v) = %q, want %q", tc.file, tc.here, got, tc.want)
		}
	}
}

// randomType builds an unnamed type from r: scalars, slices, arrays,
// pointers, maps and structs of up to three exported fields, some tagged.
// Unnamed types are identical exactly when their structures and tags are,
// which is what Diff compares (with codec tags only, as here).
func randomType(r *rand.Rand, depth int) reflect.Type {
	scalars := []reflect.Type{reflect.TypeFor[int](), reflect.TypeFor[int8](), reflect.TypeFor[uint64](),
		reflect.TypeFor[string](), reflect.TypeFor[bool](), reflect.TypeFor[float64](), reflect.TypeFor[time.Duration]()}
	if depth == 0 || r.IntN(3) == 0 {
		return scalars[r.IntN(len(scalars))]
	}
	switch r.IntN(5) {
	case 0:
		return reflect.SliceOf(randomType(r, depth-1))
	case 1:
		return reflect.ArrayOf(1+r.IntN(2), randomType(r, depth-1))
	case 2:
		return reflect.PointerTo(randomType(r, depth-1))
	case 3:
		return reflect.MapOf(scalars[r.IntN(4)], randomType(r, depth-1))
	}
	fields := make([]reflect.StructField, r.IntN(4))
	for i := range fields {
		fields[i] = reflect.StructField{Name: fmt.Sprintf("F%d%d", i, r.IntN(2)), Type: randomType(r, depth-1)}
		if r.IntN(3) == 0 {
			fields[i].Tag = reflect.StructTag(fmt.Sprintf(`codec:"f%d"`, r.IntN(2)))
		}
	}
	return reflect.StructOf(fields)
}

var descSeed = flag.Uint64("snapshot.seed", 0, "seed for TestDescribeProperty (0: a fresh one, printed)")

// Property: two random types have equal descriptions exactly when they
// are the same type, and a description survives msgpack unchanged.
func TestDescribeProperty(t *testing.T) {
	seed := *descSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed %d (replay with -snapshot.seed %d)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 1))
	for range 2000 {
		t1, t2 := randomType(r, 3), randomType(r, 3)
		if r.IntN(4) == 0 {
			t2 = t1
		}
		d1, d2 := Describe(t1), Describe(t2)
		if same, d := t1 == t2, Diff(d1, d2); same != (d == "") {
			t.Fatalf("seed %d: %v and %v: identical %v, Diff %q", seed, t1, t2, same, d)
		}
		var b []byte
		if err := codec.NewEncoderBytes(&b, handle).Encode(d1); err != nil {
			t.Fatal(err)
		}
		var back TypeDesc
		if err := codec.NewDecoderBytes(b, handle).Decode(&back); err != nil {
			t.Fatal(err)
		}
		if d := Diff(d1, &back); d != "" || back.String() != d1.String() {
			t.Fatalf("seed %d: %v through msgpack: %q, %s", seed, t1, d, back.String())
		}
	}
}

// metaV1 is Meta as builds before the shapes were recorded decode it.
type metaV1 struct {
	Version    int        `codec:"version"`
	KeyType    string     `codec:"key_type"`
	ValueType  string     `codec:"value_type"`
	Placement  string     `codec:"placement"`
	Choices    int        `codec:"choices"`
	BucketSize int        `codec:"bucket_size"`
	Hash       string     `codec:"hash"`
	Seed       uint64     `codec:"seed"`
	Buckets    uint64     `codec:"buckets"`
	Entries    uint64     `codec:"entries"`
	Stash      uint64     `codec:"stash"`
	MaxEntries int        `codec:"max_entries"`
	Created    int64      `codec:"created"`
	Histogram  [][]uint64 `codec:"histogram"`
	Checksum   uint64     `codec:"checksum"`
}

// The shapes are optional keys of the version-1 metadata: a reader that
// does not know them decodes the metadata without them (it skips keys it
// does not know), so a file with shapes stays readable by it, with the
// name check alone; and metadata without shapes decodes here.
func TestMetaShapesAreOptional(t *testing.T) {
	m := Meta{Version: 1, KeyType: "string", ValueType: "main.Item", Placement: "goleft", Choices: 2, BucketSize: 8,
		Hash: "xxhash", Seed: 3, Buckets: 4, Entries: 1, Histogram: [][]uint64{{1, 1}, {2, 0}}, Checksum: 9,
		KeyDesc: Describe(reflect.TypeFor[string]()), ValueDesc: Describe(reflect.TypeFor[descItem]())}
	var b []byte
	if err := codec.NewEncoderBytes(&b, handle).Encode(&m); err != nil {
		t.Fatal(err)
	}
	var old metaV1
	if err := codec.NewDecoderBytes(b, handle).Decode(&old); err != nil {
		t.Fatalf("an earlier build's decoder: %v", err)
	}
	if want := (metaV1{1, "string", "main.Item", "goleft", 2, 8, "xxhash", 3, 4, 1, 0, 0, 0, [][]uint64{{1, 1}, {2, 0}}, 9}); !reflect.DeepEqual(old, want) {
		t.Fatalf("an earlier build reads %+v, want %+v", old, want)
	}
	b = b[:0]
	if err := codec.NewEncoderBytes(&b, handle).Encode(&old); err != nil {
		t.Fatal(err)
	}
	// Without shapes, Meta encodes byte for byte as metadata that has no
	// shape keys: a snapshot's shapes set to nil make such a file (the
	// store's tests build their fixture of one so).
	m.KeyDesc, m.ValueDesc = nil, nil
	var now []byte
	if err := codec.NewEncoderBytes(&now, handle).Encode(&m); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(now, b) {
		t.Fatalf("Meta without shapes encodes as\n%x\nthe earlier Meta as\n%x", now, b)
	}
	var back Meta
	if err := codec.NewDecoderBytes(b, handle).Decode(&back); err != nil || back.KeyDesc != nil || back.ValueDesc != nil || back.ValueType != "main.Item" {
		t.Fatalf("old metadata: %+v, %v", back, err)
	}
}
