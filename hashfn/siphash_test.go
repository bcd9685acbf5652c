package hashfn

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/twochoice/twochoice/internal/keyset"
)

// sipVectors are SipHash-2-4's reference outputs (the specification's
// appendix and its reference implementation) under the key 00 01 … 0f, for
// the messages 00 01 … (i−1), i = 0 … 63.
var sipVectors = [64]uint64{
	0x726fdb47dd0e0e31, 0x74f839c593dc67fd, 0x0d6c8009d9a94f5a, 0x85676696d7fb7e2d,
	0xcf2794e0277187b7, 0x18765564cd99a68d, 0xcbc9466e58fee3ce, 0xab0200f58b01d137,
	0x93f5f5799a932462, 0x9e0082df0ba9e4b0, 0x7a5dbbc594ddb9f3, 0xf4b32f46226bada7,
	0x751e8fbc860ee5fb, 0x14ea5627c0843d90, 0xf723ca908e7af2ee, 0xa129ca6149be45e5,
	0x3f2acc7f57c29bdb, 0x699ae9f52cbe4794, 0x4bc1b3f0968dd39c, 0xbb6dc91da77961bd,
	0xbed65cf21aa2ee98, 0xd0f2cbb02e3b67c7, 0x93536795e3a33e88, 0xa80c038ccd5ccec8,
	0xb8ad50c6f649af94, 0xbce192de8a85b8ea, 0x17d835b85bbb15f3, 0x2f2e6163076bcfad,
	0xde4daaaca71dc9a5, 0xa6a2506687956571, 0xad87a3535c49ef28, 0x32d892fad841c342,
	0x7127512f72f27cce, 0xa7f32346f95978e3, 0x12e0b01abb051238, 0x15e034d40fa197ae,
	0x314dffbe0815a3b4, 0x027990f029623981, 0xcadcd4e59ef40c4d, 0x9abfd8766a33735c,
	0x0e3ea96b5304a7d0, 0xad0c42d6fc585992, 0x187306c89bc215a9, 0xd4a60abcf3792b95,
	0xf935451de4f21df2, 0xa9538f0419755787, 0xdb9acddff56ca510, 0xd06c98cd5c0975eb,
	0xe612a3cb9ecba951, 0xc766e62cfcadaf96, 0xee64435a9752fe72, 0xa192d576b245165a,
	0x0a8787bf8ecb74b2, 0x81b3e73d20b49b6f, 0x7fa8220ba3b2ecea, 0x245731c13ca42499,
	0xb78dbfaf3a8d83bd, 0xea1ad565322a1a0b, 0x60e61c23a3795013, 0x6606d7e446282b93,
	0x6ca4ecb15c5f91e1, 0x9f626da15c9625f3, 0xe51b38608ef25f57, 0x958a324ceb064572,
}

func TestSipKnownAnswers(t *testing.T) {
	s := NewSipKey(0x0706050403020100, 0x0f0e0d0c0b0a0908)
	msg := make([]byte, 64)
	for i := range msg {
		msg[i] = byte(i)
	}
	for i, want := range sipVectors {
		if got := s.Bytes(msg[:i]); got != want {
			t.Errorf("Bytes(00…%02x) = %#016x, want %#016x", i-1, got, want)
		}
		if got := s.String(string(msg[:i])); got != want {
			t.Errorf("String(00…%02x) = %#016x, want %#016x", i-1, got, want)
		}
	}
	// Uint64 is the 8-byte message read little-endian.
	if got, want := s.Uint64(binary.LittleEndian.Uint64(msg[:8])), sipVectors[8]; got != want {
		t.Errorf("Uint64(00…07) = %#016x, want %#016x", got, want)
	}
}

func TestSipUint64IsBytes(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %#x", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	s := NewSip(seed)
	var b [8]byte
	for range 1000 {
		v := r.Uint64()
		binary.LittleEndian.PutUint64(b[:], v)
		if s.Uint64(v) != s.Bytes(b[:]) {
			t.Fatalf("Uint64(%#x) != Bytes of its bytes", v)
		}
	}
}

// The seed is the whole key: the same seed gives the same function, and
// its key is SplitMix64's first two outputs.
func TestSipSeed(t *testing.T) {
	g := NewSplitMix64(42)
	k0 := g.Next()
	k1 := g.Next()
	for _, in := range []string{"", "x", "twochoice", "0123456789abcdef0123"} {
		if got, want := NewSip(42).String(in), NewSipKey(k0, k1).String(in); got != want {
			t.Fatalf("NewSip(42).String(%q) = %#x, want %#x: the key is not SplitMix64(42)'s first two outputs", in, got, want)
		}
	}
	if NewSip(42).Seed() != 42 {
		t.Fatal("Seed does not return the seed")
	}
	if NewSip(1).String("twochoice") == NewSip(2).String("twochoice") {
		t.Fatal("two seeds gave the same hash")
	}
}

// Keys built from XXH64's lane differences collide under seeded xxHash64
// whatever the seed (keyset.XXHashFlood says why); tabulation folds
// strings through xxHash64 and inherits the collisions; SipHash, keyed
// from the same seeds, does not collide on them. This is why a store
// moves a flooded table to SipHash rather than re-seeding it again.
func TestFloodKeysCollideUnderXXHashOnly(t *testing.T) {
	keys := keyset.XXHashFlood(1<<12, 256, 7)
	for _, kind := range Kinds() {
		for range 5 {
			seed := rand.Uint64()
			f, _ := New(kind, seed)
			distinct := map[uint64]bool{}
			for _, k := range keys {
				distinct[f.Bytes(k)] = true
			}
			t.Logf("%v seed %#x: %d distinct hashes of %d keys", kind, seed, len(distinct), len(keys))
			switch {
			case kind == SipHash && len(distinct) != len(keys):
				t.Errorf("siphash seed %#x: %d distinct hashes of %d keys", seed, len(distinct), len(keys))
			case kind != SipHash && len(distinct) > 4:
				t.Errorf("%v seed %#x: %d distinct hashes of %d flood keys: the construction no longer collides", kind, seed, len(distinct), len(keys))
			}
		}
	}
}
