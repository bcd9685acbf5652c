package store

import "math/bits"

// slotsPerBucket is the room every bucket has: its 8 tags fill one 64-bit
// control word, so one word compares a tag against all of them at once.
const slotsPerBucket = 8

// The control word of a bucket holds one byte per slot, slot j in byte j
// (bits 8j to 8j+7):
//
//	0x00        empty, and never full in this table (emptyFresh)
//	0x01        empty, and full before (emptyUsed)
//	0x80 | t    full, with the 7-bit tag t of the key's hash
//
// Unlike Go's Swiss map there are no tombstones: a key never probes past
// its candidate buckets, so a deleted slot simply becomes empty again. The
// two kinds of empty differ only in how a writer may fill them: an
// optimistic reader may still be reading a slot that was full, never one
// that was not (bucketOf.put).
const (
	emptyFresh = 0x00
	emptyUsed  = 0x01
)

const (
	lsbs = 0x0101010101010101 // the lowest bit of every byte
	msbs = 0x8080808080808080 // the highest bit of every byte
)

// tagOf returns the control byte of a key with hash h: its 7 lowest bits
// with the high bit set. The candidates are made by multiply-shift from the
// TOP bits of the hash's 32-bit words, so for tables under about 2^25
// buckets the lowest bits are independent of the bucket a key lands in and
// two keys that share a bucket share a tag with probability 1/128.
func tagOf(h uint64) uint8 { return 0x80 | uint8(h&0x7f) }

// ctrl is a bucket's control word.
type ctrl uint64

// match returns a mask with the high bit set in the byte of every slot
// whose control byte equals tag. This is the portable zero-byte trick (as
// in Go's ctrlGroupMatchH2): XOR the broadcast tag in, so matching bytes
// become zero, then (v - 0x01…01) &^ v keeps the high bit of each byte that
// was zero. A borrow out of a zero byte can also flag the byte above it
// when that byte was 0x01, that is when the slot holds tag^1: so the mask
// may have false positives, never false negatives, and the lowest flagged
// byte is always a true match. Callers compare full keys anyway. Empty
// slots (0x00) never match, since a tag has its high bit set.
func (c ctrl) match(tag uint8) uint64 {
	v := uint64(c) ^ (lsbs * uint64(tag))
	return (v - lsbs) &^ v & msbs
}

// full returns a mask with the high bit set in the byte of every full slot.
func (c ctrl) full() uint64 { return uint64(c) & msbs }

// empty returns a mask with the high bit set in the byte of every empty
// slot among those in capMask (the high bits of the first BucketSize
// bytes). It is exact: full bytes have their high bit set.
func (c ctrl) empty(capMask uint64) uint64 { return ^uint64(c) & capMask }

// load returns the number of full slots.
func (c ctrl) load() int { return bits.OnesCount64(uint64(c) & msbs) }

// at returns slot j's byte.
func (c ctrl) at(j int) uint8 { return uint8(uint64(c) >> (8 * uint(j))) }

// slotOf returns the slot index of the lowest byte flagged in mask m.
func slotOf(m uint64) int { return bits.TrailingZeros64(m) >> 3 }

// withSlot returns c with slot j's byte set to b.
func (c ctrl) withSlot(j int, b uint8) ctrl {
	sh := uint(j) * 8
	return ctrl(uint64(c)&^(0xff<<sh) | uint64(b)<<sh)
}

// capMaskOf returns the high bits of the first size bytes.
func capMaskOf(size int) uint64 {
	if size >= slotsPerBucket {
		return msbs
	}
	return msbs & (1<<(8*uint(size)) - 1)
}
