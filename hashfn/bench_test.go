package hashfn

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/twochoice/twochoice/internal/keyset"
)

var sink uint64

// benchKeys returns 1024 distinct keys of the given length, so the loop
// does not hash one key over and over (which would let the CPU overlap
// hashes of identical inputs unrealistically well).
func benchKeys(size int) [][]byte {
	keys := make([][]byte, 1024)
	for i := range keys {
		k := make([]byte, size)
		for j := range k {
			k[j] = byte(i*31 + j*7)
		}
		k[0], k[1] = byte(i), byte(i>>8)
		keys[i] = k
	}
	return keys
}

// BenchmarkHash compares, for each key length, raw xxhash.Sum64 (the peer),
// seeded xxHash through this package, tabulation (which folds with xxHash
// first for byte keys) and SipHash (the flood-resistant family). Each loop is written out, not passed as a
// closure, so an indirect call does not dilute the differences, and they
// count to b.N rather than call b.Loop, which would keep the compiler from
// inlining the thin wrappers (XXH.Bytes) as it does in real callers.
func BenchmarkHash(b *testing.B) {
	xx := NewXXH(0x5eed)
	tb := NewTab(0x5eed)
	sip := NewSip(0x5eed)
	for _, size := range []int{8, 16, 64, 256} {
		keys := benchKeys(size)
		strs := make([]string, len(keys))
		for i, k := range keys {
			strs[i] = string(k)
		}
		b.Run(fmt.Sprintf("xxhash.Sum64/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			var h uint64
			for i := 0; i < b.N; i++ {
				h ^= xxhash.Sum64(keys[i&1023])
			}
			sink = h
		})
		b.Run(fmt.Sprintf("XXH.Bytes/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			var h uint64
			for i := 0; i < b.N; i++ {
				h ^= xx.Bytes(keys[i&1023])
			}
			sink = h
		})
		b.Run(fmt.Sprintf("XXH.String/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			var h uint64
			for i := 0; i < b.N; i++ {
				h ^= xx.String(strs[i&1023])
			}
			sink = h
		})
		b.Run(fmt.Sprintf("Tab.String/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			var h uint64
			for i := 0; i < b.N; i++ {
				h ^= tb.String(strs[i&1023])
			}
			sink = h
		})
		b.Run(fmt.Sprintf("Sip.String/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			var h uint64
			for i := 0; i < b.N; i++ {
				h ^= sip.String(strs[i&1023])
			}
			sink = h
		})
	}
}

// BenchmarkUint64 compares tabulation of a 64-bit key with xxHash of the same
// 8 bytes, seeded (XXH.Uint64) and raw (xxhash.Sum64 of the bytes).
func BenchmarkUint64(b *testing.B) {
	xx := NewXXH(0x5eed)
	tb := NewTab(0x5eed)
	keys := benchKeys(8)
	words := make([]uint64, len(keys))
	for i, k := range keys {
		words[i] = u64(k)
	}
	b.Run("xxhash.Sum64", func(b *testing.B) {
		b.ReportAllocs()
		var h uint64
		for i := 0; i < b.N; i++ {
			h ^= xxhash.Sum64(keys[i&1023])
		}
		sink = h
	})
	b.Run("XXH.Uint64", func(b *testing.B) {
		b.ReportAllocs()
		var h uint64
		for i := 0; i < b.N; i++ {
			h ^= xx.Uint64(words[i&1023])
		}
		sink = h
	})
	b.Run("Tab.Uint64", func(b *testing.B) {
		b.ReportAllocs()
		var h uint64
		for i := 0; i < b.N; i++ {
			h ^= tb.Uint64(words[i&1023])
		}
		sink = h
	})
}

func BenchmarkFill(b *testing.B) {
	for _, s := range []Scheme{Independent, Parts, Double} {
		for _, d := range []int{2, 4} {
			g, _ := NewGenerator(s, 1<<20, d)
			dst := make([]uint64, d)
			b.Run(fmt.Sprintf("%v/d%d", s, d), func(b *testing.B) {
				b.ReportAllocs()
				h := uint64(1)
				for b.Loop() {
					h = h*6364136223846793005 + 1
					g.Fill(h, dst)
				}
				sink = dst[0]
			})
		}
	}
}

// BenchmarkRatio measures the two ratios the project holds itself to in one
// loop each: chunks of 4096 hashes alternate between the peer and the
// contender, each chunk timed, so that a noisy neighbour slows both alike.
// It reports the contender's ns/op and its ratio to the peer.
//
//	seeded-xxh16: XXH.Bytes vs xxhash.Sum64 on 16-byte keys (target ≤ 1.2)
//	tab-uint64:   Tab.Uint64 vs XXH.Uint64 on the same 64-bit keys (target ≤ 1.5)
//
// and, on keys of mixed lengths (mixedKeys), XXH.String against
// xxhash.Sum64String:
//
//	mixed-synthetic: the store benchmarks' keys, keyset.Synthetic
//	mixed-1to64:     random bytes of random lengths 1 to 64
func BenchmarkRatio(b *testing.B) {
	xx := NewXXH(0x5eed)
	tb := NewTab(0x5eed)
	keys := benchKeys(16)
	words := make([]uint64, len(keys))
	for i, k := range keys {
		words[i] = u64(k)
	}
	paired := func(b *testing.B, peer, contender func(n int) uint64) {
		const chunk = 4096
		var tPeer, tCont time.Duration
		var h uint64
		for done := 0; done < b.N; done += chunk {
			t0 := time.Now()
			h ^= peer(chunk)
			t1 := time.Now()
			h ^= contender(chunk)
			tPeer += t1.Sub(t0)
			tCont += time.Since(t1)
		}
		sink = h
		ops := float64((b.N + chunk - 1) / chunk * chunk)
		b.ReportMetric(float64(tCont.Nanoseconds())/ops, "ns/hash")
		b.ReportMetric(float64(tPeer.Nanoseconds())/ops, "peer-ns/hash")
		b.ReportMetric(float64(tCont)/float64(tPeer), "x-peer")
	}
	b.Run("seeded-xxh16", func(b *testing.B) {
		paired(b, func(n int) uint64 {
			var h uint64
			for i := 0; i < n; i++ {
				h ^= xxhash.Sum64(keys[i&1023])
			}
			return h
		}, func(n int) uint64 {
			var h uint64
			for i := 0; i < n; i++ {
				h ^= xx.Bytes(keys[i&1023])
			}
			return h
		})
	})
	for _, m := range []struct {
		name string
		keys []string
	}{
		{"mixed-synthetic", mixedKeys(keyset.Synthetic(1<<12, 1))},
		{"mixed-1to64", mixedKeys(randomLengthKeys(1<<12, 64))},
	} {
		strs := m.keys
		b.Run(m.name, func(b *testing.B) {
			paired(b, func(n int) uint64 {
				var h uint64
				for i := 0; i < n; i++ {
					h ^= xxhash.Sum64String(strs[i&(1<<12-1)])
				}
				return h
			}, func(n int) uint64 {
				var h uint64
				for i := 0; i < n; i++ {
					h ^= xx.String(strs[i&(1<<12-1)])
				}
				return h
			})
		})
	}
	b.Run("tab-uint64", func(b *testing.B) {
		paired(b, func(n int) uint64 {
			var h uint64
			for i := 0; i < n; i++ {
				h ^= xx.Uint64(words[i&1023])
			}
			return h
		}, func(n int) uint64 {
			var h uint64
			for i := 0; i < n; i++ {
				h ^= tb.Uint64(words[i&1023])
			}
			return h
		})
	})
}

// mixedKeys returns 4096 keys in a seeded random order. Real keys have
// mixed lengths, so the branches on a key's length in the tail of xxHash
// mispredict; the fixed-length benchmarks above let the predictor learn
// them perfectly. Synthetic makes its four shapes in turn (i%4), a period
// the predictor would learn too, hence the shuffle.
func mixedKeys(keys []string) []string {
	if len(keys) != 1<<12 {
		panic("mixedKeys: want 4096 keys")
	}
	keys = append([]string(nil), keys...)
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	return keys
}

// randomLengthKeys returns n keys of random bytes and random lengths from 1
// to max, from a fixed seed.
func randomLengthKeys(n, max int) []string {
	r := rand.New(rand.NewPCG(3, 4))
	keys := make([]string, n)
	for i := range keys {
		k := make([]byte, 1+r.IntN(max))
		for j := range k {
			k[j] = byte(r.Uint32())
		}
		keys[i] = string(k)
	}
	return keys
}
