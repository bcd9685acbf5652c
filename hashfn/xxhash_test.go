package hashfn

import (
	"testing"

	"github.com/cespare/xxhash/v2"
)

// Known answers. Seed 0 rows with inputs "", "a" and "abc" are the XXH64
// reference vectors; the others were produced by cespare/xxhash's Digest
// (an independent implementation) started with the seed.
var xxhVectors = []struct {
	seed uint64
	in   string
	want uint64
}{
	{0x0, "", 0xef46db3751d8e999},
	{0x0, "a", 0xd24ec4f1a98c6e5b},
	{0x0, "abc", 0x44bc2cf5ad770999},
	{0x0, "twochoice", 0x3990df5a94704fcc},
	{0x0, "0123456789abcdef", 0x5c5b90c34e376d0b},
	{0x0, "The quick brown fox jumps over the lazy dog", 0x0b242d361fda71bc},
	{0x0, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef!", 0x2020b26dbc09cee8},
	{0x1, "", 0xd5afba1336a3be4b},
	{0x1, "a", 0xdec2bc81c3cd46c6},
	{0x1, "abc", 0xbea9ca8199328908},
	{0x1, "twochoice", 0x5560ac0fb9d2ab58},
	{0x1, "0123456789abcdef", 0x95398bc8fb82b74d},
	{0x1, "The quick brown fox jumps over the lazy dog", 0xdf5091b6dad2c6db},
	{0x1, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef!", 0xfa2d354d4e7cc4ee},
	{0x9e3779b97f4a7c15, "", 0xc4349fc93c010000},
	{0x9e3779b97f4a7c15, "a", 0x9a7c6d2ea45568c9},
	{0x9e3779b97f4a7c15, "abc", 0x2ed0f59d6b43ac8b},
	{0x9e3779b97f4a7c15, "twochoice", 0x7368626404d31993},
	{0x9e3779b97f4a7c15, "0123456789abcdef", 0x59616d12da431321},
	{0x9e3779b97f4a7c15, "The quick brown fox jumps over the lazy dog", 0x7cfac66832f66b74},
	{0x9e3779b97f4a7c15, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef!", 0x06a25d8aaa9c3cc0},
}

func TestXXHKnownAnswers(t *testing.T) {
	for _, v := range xxhVectors {
		x := NewXXH(v.seed)
		if got := x.String(v.in); got != v.want {
			t.Errorf("String(%q) seed %#x = %#016x, want %#016x", v.in, v.seed, got, v.want)
		}
		if got := x.Bytes([]byte(v.in)); got != v.want {
			t.Errorf("Bytes(%q) seed %#x = %#016x, want %#016x", v.in, v.seed, got, v.want)
		}
	}
}

// Every length from 0 to 200 crosses each branch of the algorithm (each of
// the 32 tails after the stripes: 0 to 3 words, the 4-byte step or not, 0
// to 3 single bytes; no stripe, one and several), at every alignment of
// the key within a word, for Bytes and String.
func TestXXHMatchesDigestAllLengths(t *testing.T) {
	buf := make([]byte, 200+7)
	for i := range buf {
		buf[i] = byte(i*7 + 3)
	}
	for _, seed := range []uint64{0, 1, 42, 0x9e3779b97f4a7c15, ^uint64(0)} {
		for off := range 8 {
			for n := 0; n <= 200; n++ {
				k := buf[off : off+n]
				want := digest(seed, k)
				if got := NewXXH(seed).Bytes(k); got != want {
					t.Fatalf("seed %#x, offset %d, %d bytes: Bytes %#x, want %#x", seed, off, n, got, want)
				}
				if got := NewXXH(seed).String(string(k)); got != want {
					t.Fatalf("seed %#x, offset %d, %d bytes: String %#x, want %#x", seed, off, n, got, want)
				}
			}
		}
	}
	if got, want := NewXXH(0).Bytes(buf), xxhash.Sum64(buf); got != want {
		t.Fatalf("seed 0 differs from xxhash.Sum64: %#x vs %#x", got, want)
	}
}

func digest(seed uint64, b []byte) uint64 {
	d := xxhash.NewWithSeed(seed)
	d.Write(b)
	return d.Sum64()
}

func le(v uint64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return b
}

func FuzzXXH(f *testing.F) {
	f.Add(uint64(0), []byte("abc"))
	f.Add(uint64(7), make([]byte, 33))
	f.Fuzz(func(t *testing.T, seed uint64, b []byte) {
		x := NewXXH(seed)
		want := digest(seed, b)
		if got := x.Bytes(b); got != want {
			t.Fatalf("Bytes = %#x, want %#x", got, want)
		}
		if got := x.String(string(b)); got != want {
			t.Fatalf("String = %#x, want %#x", got, want)
		}
		if len(b) >= 8 {
			v := uint64(0)
			for i := 7; i >= 0; i-- {
				v = v<<8 | uint64(b[i])
			}
			if got, want := x.Uint64(v), digest(seed, b[:8]); got != want {
				t.Fatalf("Uint64(%#x) = %#x, want %#x", v, got, want)
			}
		}
	})
}

func TestXXHUint64IsBytes(t *testing.T) {
	for _, seed := range []uint64{0, 3, 1 << 63} {
		for _, v := range []uint64{0, 1, 0xff, 0x0123456789abcdef, ^uint64(0)} {
			x := NewXXH(seed)
			if x.Uint64(v) != x.Bytes(le(v)) {
				t.Errorf("seed %#x: Uint64(%#x) != Bytes of its 8 little-endian bytes", seed, v)
			}
		}
	}
}

// Seeds must give unrelated functions: between two seeds each output bit
// flips for about half the keys, and the outputs are not a fixed XOR apart.
func TestSeedsUnrelated(t *testing.T) {
	const keys = 20000
	pairs := [][2]uint64{{0, 1}, {1, 2}, {42, 42 ^ 1<<63}, {7, 7 ^ 1<<32}}
	for _, k := range Kinds() {
		for _, p := range pairs {
			a, _ := New(k, p[0])
			b, _ := New(k, p[1])
			var flips [64]int
			xors := map[uint64]bool{}
			for i := range uint64(keys) {
				d := a.Uint64(i) ^ b.Uint64(i)
				xors[d] = true
				for bit := range 64 {
					flips[bit] += int(d >> bit & 1)
				}
			}
			for bit, f := range flips {
				// 6σ of a fair coin over 20,000 keys is 424.
				if f < keys/2-424 || f > keys/2+424 {
					t.Errorf("%v seeds %#x/%#x: bit %d flips for %d of %d keys", k, p[0], p[1], bit, f, keys)
				}
			}
			if len(xors) < keys*99/100 {
				t.Errorf("%v seeds %#x/%#x: outputs differ by only %d distinct XORs", k, p[0], p[1], len(xors))
			}
		}
	}
}
