package store

import (
	"math/bits"
	"reflect"
)

// A slot's word layout: which of its machine words hold pointers. Optimistic
// reads (seqlock.go) copy a slot word by word with atomic loads, each
// pointer word with atomic.LoadPointer so the garbage collector and the race
// detector see it for what it is, each other word as a uintptr. That is
// only sound if the layout is known exactly, so New computes it once from
// the slot's type with reflect, for the kinds whose layout the language and
// its runtime fix:
//
//   - booleans, integers, floats, complex numbers, uintptr: no pointer;
//   - pointers, unsafe.Pointer, maps, channels, functions: one pointer word;
//   - strings (data, len), slices (data, len, cap): a pointer word first;
//   - interfaces (type or itab, data): two pointer words, both always
//     valid pointers (the data word points at the value, or is the
//     pointer for pointer-shaped types);
//   - arrays and structs of the above, at their offsets.
//
// A word is a pointer word if a pointer field starts there; pointers are
// word-aligned, so no pointer straddles two words, and the scalar words may
// mix fields and padding. Slots larger than maxOptimisticWords words are
// left to the locked read path, where copying under a lock costs less than
// retrying a long copy.
type wordLayout struct {
	words int    // the slot's size in words; 0 means the locked path
	ptrs  uint64 // bit i set: word i holds a pointer
	val   int    // the first word that holds part of the value
}

// maxOptimisticWords bounds the slots read optimistically: 32 words (256
// bytes on 64-bit machines), e.g. a string key and a 28-word value.
const maxOptimisticWords = 32

// wordSize is the size of a machine word (and of a pointer) in bytes.
const wordSize = bits.UintSize / 8

// slotLayout returns the word layout of the slots of a Map[K, V] or Cache[K, V], or
// the zero layout (the locked path) in purego builds and for slots that
// layoutOf turns down.
func slotLayout[K comparable, V any]() wordLayout {
	if !optimisticReads {
		return wordLayout{}
	}
	l := layoutOf(reflect.TypeFor[slot[K, V]]())
	if l.words > 0 {
		l.val = valueWord[K, V]()
	}
	return l
}

// layoutOf returns the word layout of t, or the zero layout (the locked
// path) if t is too large or its size is not a whole number of words.
func layoutOf(t reflect.Type) wordLayout {
	size := t.Size()
	if size == 0 || size%wordSize != 0 || size/wordSize > maxOptimisticWords || t.Align() < int(wordSize) {
		return wordLayout{}
	}
	l := wordLayout{words: int(size / wordSize)}
	if !l.mark(t, 0) {
		return wordLayout{}
	}
	return l
}

// mark sets the pointer bits of a value of type t at byte offset off, and
// reports whether it knows t's layout.
func (l *wordLayout) mark(t reflect.Type, off uintptr) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Pointer, reflect.UnsafePointer, reflect.Map, reflect.Chan, reflect.Func,
		reflect.String, reflect.Slice:
		return l.pointerAt(off)
	case reflect.Interface:
		return l.pointerAt(off) && l.pointerAt(off+wordSize)
	case reflect.Array:
		e := t.Elem()
		for i := range t.Len() {
			if !l.mark(e, off+uintptr(i)*e.Size()) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !l.mark(f.Type, off+f.Offset) {
				return false
			}
		}
		return true
	}
	return false
}

// pointerAt marks the word at byte offset off as a pointer word; it
// reports false if off is not word-aligned (it always is in Go's layouts).
func (l *wordLayout) pointerAt(off uintptr) bool {
	if off%wordSize != 0 || off/wordSize >= uintptr(l.words) {
		return false
	}
	l.ptrs |= 1 << (off / wordSize)
	return true
}
