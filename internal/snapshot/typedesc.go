package snapshot

import (
	"fmt"
	"reflect"
	"strings"
)

// Type descriptions.
//
// A snapshot names its key and value types (Meta.KeyType, ValueType:
// reflect's String, the package's name and the type's, without the
// package path). A name does not pin a shape: two programs' main.Item, or
// one type whose fields changed between two builds, have the same name,
// and msgpack decodes one's records into the other's Go values as best it
// can: a field it does not find stays zero, a slice is cut to a shorter
// array, a number becomes a float, and a string read as an int is an
// error that looks like a damaged file. So a snapshot also records each
// type's structure ([TypeDesc]), and a reader compares it with its own
// ([TypeDesc.Diff]) before it decodes a record.
//
// A description is built from reflect's view of the type alone, walking
// it depth first in declaration order, and is stored as plain data (kind
// names, type names, field names and tags, lengths): no reflect.Type
// pointers and no map iteration, so the same type gives the same bytes in
// every process and under every Go version that keeps reflect's kind
// names, which Go has never changed.
//
// What is recorded:
//
//   - every type's kind (reflect.Kind's name) and, for a named type, its
//     name as reflect's String gives it (without the package path, as
//     KeyType and ValueType; so another program's main.Item of the same
//     shape matches). Names count at every level: a field of type
//     time.Duration does not match one of type int64, and a type that
//     encodes itself (time.Time, a BinaryMarshaler) is told apart by its
//     name even where its fields are hidden;
//   - arrays: their length and element; slices and pointers: their
//     element; maps: their key and element;
//   - structs: the fields the encoder sees, in declaration order:
//     exported fields, embedded ones (whose fields it inlines), and the
//     codec's _struct field (whose tag sets options such as toarray),
//     less those tagged "-" (codec:"-", or json:"-" without a codec key);
//     each with its name, whether it is embedded, and its tag for the
//     encoder (the codec key, or the json key that the codec falls back
//     to);
//     unexported fields are not saved, and are left out;
//   - interfaces, functions, channels and unsafe pointers: their kind and
//     name only (reflect's String, "interface {}" for any). msgpack writes
//     an interface's dynamic value and leaves out the others (Save refuses
//     them as values; as struct fields they are not saved), so there is no
//     structure to compare;
//   - a named array, slice, pointer, map or struct type met again, after
//     its first description (depth first) or inside itself (type Node
//     struct{ Next *Node }): its name only, marked as a reference (after
//     its first description only if it is the first type of its name
//     described: another type of the same name is described again, so
//     that a reference is never ambiguous but inside itself). Each
//     such type is described once, so a description grows with the
//     type's declarations. Described along every path through them (a
//     pathwise description, where only recursion makes a reference),
//     types that link to one another would give descriptions that grow as
//     the factorial of their number (nine types that all point to one
//     another: 23 MB), and nested ones exponentially in their depth.
//     Version-1 files may hold pathwise descriptions, and Diff reads
//     them: a reference on one side matches the whole description on the
//     other.
//
// Two descriptions match if they are equal in all of that: same fields in
// the same order, with the same names, tags and types; names compare
// without the package paths and local types' counters that reflect writes
// inside a generic type's brackets (SameTypeName, typename.go). That is
// stricter than msgpack needs (it matches struct fields by name, so
// reordered or added fields would decode), deliberately: a snapshot is
// restored into the type it was saved from, and any other shape is
// refused rather than guessed at.

// TypeDesc describes the shape of a Go type, as a snapshot records it for
// its keys and values (see above).
type TypeDesc struct {
	// Kind is reflect.Kind's name: "int", "string", "struct", "ptr", ...
	Kind string `codec:"kind" json:"kind"`
	// Name is reflect's String of a named type ("store.Item", "time.Time")
	// and of the kinds described by name only (interfaces, functions,
	// channels, unsafe pointers); empty for other unnamed types and for
	// the predeclared ones, whose name is their kind.
	Name string `codec:"name,omitempty" json:"name,omitempty"`
	// Ref marks a named type described earlier in the same description
	// (depth first), or met again inside itself: the description stops
	// there, at its name.
	Ref bool `codec:"ref,omitempty" json:"ref,omitempty"`
	// Len is an array's length.
	Len int `codec:"len,omitempty" json:"len,omitempty"`
	// Key is a map's key type.
	Key *TypeDesc `codec:"key,omitempty" json:"key,omitempty"`
	// Elem is the element of an array, slice or map, or a pointer's
	// target.
	Elem *TypeDesc `codec:"elem,omitempty" json:"elem,omitempty"`
	// Fields are a struct's fields that the encoder sees.
	Fields []FieldDesc `codec:"fields,omitempty" json:"fields,omitempty"`

	// whole is, in a Ref that Describe made, the type's whole
	// description, for Diff to compare with a file that has it there
	// (one written while only recursion made a Ref). Not recorded.
	whole *TypeDesc
}

// FieldDesc describes a struct field.
type FieldDesc struct {
	Name     string `codec:"name" json:"name"`
	Embedded bool   `codec:"embedded,omitempty" json:"embedded,omitempty"`
	// Tag is the field's tag for the encoder: `codec:"..."`, or
	// `json:"..."` when it has no codec key (the codec reads that then).
	Tag  string   `codec:"tag,omitempty" json:"tag,omitempty"`
	Type TypeDesc `codec:"type" json:"type"`
}

// Describe returns the description of t that a snapshot records.
func Describe(t reflect.Type) *TypeDesc {
	d := describe(t, &described{whole: map[reflect.Type]*TypeDesc{}, first: map[string]reflect.Type{}, around: map[reflect.Type]bool{}})
	return &d
}

// described holds, while Describe runs, the named types of structure
// described so far.
type described struct {
	// whole is where each one's whole description is (or will be, once
	// describe returns it).
	whole map[reflect.Type]*TypeDesc
	// first is the first type described under each name. Only it is
	// referred to by name: another type of the same name (two packages
	// named models, two functions' local Item) is described in whole
	// each time, so that a reference always means the first description
	// of its name, in the file as here.
	first map[string]reflect.Type
	// around holds the types being described around the current one: a
	// type met inside itself is a reference whatever its name.
	around map[reflect.Type]bool
}

// describe describes t.
func describe(t reflect.Type, ds *described) (d TypeDesc) {
	d = TypeDesc{Kind: t.Kind().String()}
	if t.Name() != "" && t.Name() != d.Kind {
		d.Name = t.String()
	}
	switch t.Kind() {
	case reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		d.Name = t.String()
		return d
	case reflect.Array, reflect.Slice, reflect.Pointer, reflect.Map, reflect.Struct:
		if t.Name() == "" {
			break
		}
		first, named := ds.first[d.Name]
		if first == t || ds.around[t] {
			d.Ref, d.whole = true, ds.whole[t]
			return d
		}
		if !named {
			ds.first[d.Name] = t
		}
		whole := new(TypeDesc)
		ds.whole[t] = whole
		ds.around[t] = true
		defer func() {
			*whole = d
			delete(ds.around, t)
		}()
	}
	switch t.Kind() {
	case reflect.Array:
		d.Len = t.Len()
		d.Elem = describePtr(t.Elem(), ds)
	case reflect.Slice, reflect.Pointer:
		d.Elem = describePtr(t.Elem(), ds)
	case reflect.Map:
		d.Key = describePtr(t.Key(), ds)
		d.Elem = describePtr(t.Elem(), ds)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			key, tag := encoderTag(f.Tag)
			if (!f.IsExported() && !f.Anonymous && f.Name != "_struct") || key == "-" {
				continue // not saved
			}
			d.Fields = append(d.Fields, FieldDesc{Name: f.Name, Embedded: f.Anonymous, Tag: tag, Type: describe(f.Type, ds)})
		}
	}
	return d
}

func describePtr(t reflect.Type, ds *described) *TypeDesc {
	d := describe(t, ds)
	return &d
}

// encoderTag returns the part of a field's tag that the codec reads (its
// codec key, or else its json key: the codec's default TypeInfos), and the
// name it gives the field there ("-": the field is not encoded).
func encoderTag(tag reflect.StructTag) (name, part string) {
	for _, key := range []string{"codec", "json"} {
		if v, ok := tag.Lookup(key); ok {
			name, _, _ = strings.Cut(v, ",")
			return name, fmt.Sprintf("%s:%q", key, v)
		}
	}
	return "", ""
}

// String renders d in Go's syntax, a named type as its name followed by
// its structure: "store.Item struct { A int; B []string `codec:\"b\"` }".
// A type met again inside itself, and the kinds described by name only,
// are their name alone.
func (d *TypeDesc) String() string {
	var b strings.Builder
	d.write(&b)
	return b.String()
}

func (d *TypeDesc) write(b *strings.Builder) {
	if d.Name != "" {
		b.WriteString(d.Name)
		if d.Ref || !d.structured() {
			return
		}
		b.WriteByte(' ')
	}
	switch {
	case d.Kind == "array" && d.Elem != nil:
		fmt.Fprintf(b, "[%d]", d.Len)
		d.Elem.write(b)
	case d.Kind == "slice" && d.Elem != nil:
		b.WriteString("[]")
		d.Elem.write(b)
	case d.Kind == "ptr" && d.Elem != nil:
		b.WriteByte('*')
		d.Elem.write(b)
	case d.Kind == "map" && d.Key != nil && d.Elem != nil:
		b.WriteString("map[")
		d.Key.write(b)
		b.WriteByte(']')
		d.Elem.write(b)
	case d.Kind == "struct":
		b.WriteString("struct {")
		for i := range d.Fields {
			if i > 0 {
				b.WriteByte(';')
			}
			b.WriteByte(' ')
			d.Fields[i].write(b)
		}
		if len(d.Fields) > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('}')
	default:
		b.WriteString(d.Kind)
	}
}

// structured reports whether d has a structure to show after its name:
// kinds described by name only, and a named type whose kind is its
// name's (a file may say anything), have not.
func (d *TypeDesc) structured() bool {
	switch d.Kind {
	case "interface", "func", "chan", "unsafe.Pointer":
		return false
	}
	return true
}

func (f *FieldDesc) write(b *strings.Builder) {
	if !f.Embedded {
		b.WriteString(f.Name)
		b.WriteByte(' ')
	}
	f.Type.write(b)
	if f.Tag != "" {
		b.WriteString(" `")
		b.WriteString(f.Tag)
		b.WriteByte('`')
	}
}

// Diff returns "" if file (a snapshot's description) and here (the
// reader's) describe the same shape, and otherwise where they first
// differ and how, as "field A: int in the file, string here".
func Diff(file, here *TypeDesc) string {
	return diff(file, here, nil)
}

// diff compares a and b, found at path (the fields and elements walked to
// reach them).
func diff(a, b *TypeDesc, path []string) string {
	if b.Ref && !a.Ref && b.whole != nil {
		// A file described the type again in whole (see Describe's
		// references): compare with its whole description here. Each
		// step of diff goes down the file's description, so this ends.
		b = b.whole
	}
	at := func(what string) string {
		if len(path) == 0 {
			return what
		}
		return strings.Join(path, ", ") + ": " + what
	}
	if a.Kind != b.Kind || !SameTypeName(a.Name, b.Name) || a.Ref != b.Ref || a.Len != b.Len ||
		(a.Key == nil) != (b.Key == nil) || (a.Elem == nil) != (b.Elem == nil) {
		return at(fmt.Sprintf("%s in the file, %s here", a, b))
	}
	if a.Key != nil {
		if s := diff(a.Key, b.Key, append(path, "map key")); s != "" {
			return s
		}
	}
	if a.Elem != nil {
		what := "element"
		if a.Kind == "ptr" {
			what = "pointer target"
		}
		if s := diff(a.Elem, b.Elem, append(path, what)); s != "" {
			return s
		}
	}
	for i := range max(len(a.Fields), len(b.Fields)) {
		switch {
		case i >= len(a.Fields):
			return at(fmt.Sprintf("field %s only here", b.Fields[i].Name))
		case i >= len(b.Fields):
			return at(fmt.Sprintf("field %s only in the file", a.Fields[i].Name))
		}
		fa, fb := &a.Fields[i], &b.Fields[i]
		if fa.Name != fb.Name || fa.Embedded != fb.Embedded || fa.Tag != fb.Tag {
			return at(fmt.Sprintf("field %d (from 1) is %s in the file, %s here", i+1, fieldHead(fa), fieldHead(fb)))
		}
		if s := diff(&fa.Type, &fb.Type, append(path, "field "+fa.Name)); s != "" {
			return s
		}
	}
	return ""
}

// fieldHead is a field's name, tag and whether it is embedded, for Diff.
func fieldHead(f *FieldDesc) string {
	s := f.Name
	if f.Embedded {
		s += " (embedded)"
	}
	if f.Tag != "" {
		s += " `" + f.Tag + "`"
	}
	return s
}
