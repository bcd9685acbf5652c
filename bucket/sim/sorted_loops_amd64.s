//go:build amd64 && !purego

#include "textflag.h"

// The sorted mode's loops (sorted_loops.go has their Go twins and what
// they do): the four fused loops, then the three paired ones (paired.go).
// Each loads its arguments itself, written out rather than in a shared
// macro, so that go vet checks their frame offsets. Registers common to
// all:
//	SI bins, DI next, BX the stream state x, R9 end (the paired loops:
//	the words left), R11 golden, R12 wyMix (wyrand's constants, rng.go),
//	AX the word u = mix(x) (MULQ also writes DX).
// The paired loops keep the second chain's state in R14 and its counters
// at R15; its bins are 2·sortedMax bytes after the first chain's.

// MIXOF sets AX to mix(X) = hi ^ lo of X · (X ^ wyMix), using DX; MIX
// is MIXOF of the state BX.
#define MIXOF(X) \
	MOVQ R12, AX \
	XORQ X, AX   \
	MULQ X       \
	XORQ DX, AX

#define MIX MIXOF(BX)

#define CONSTANTS \
	MOVQ $0xa0761d6478bd642f, R11 \
	MOVQ $0xe7037ed1a0b428db, R12

// RAISEAT raises the first bin below level REG's load (REG = the new
// load, or part<<8 | new load) in the bins at OFF(SI) counted by the
// counters at NEXT: p = next[REG]; bins[p] = REG; next[REG] = p+1. Uses
// DX. RAISE is RAISEAT of the bins at SI and the counters at DI.
#define RAISEAT(REG, REGB, NEXT, OFF) \
	MOVL (NEXT)(REG*4), DX     \
	MOVB REGB, OFF(SI)(DX*1)   \
	INCL DX                    \
	MOVL DX, (NEXT)(REG*4)

#define RAISE(REG, REGB) RAISEAT(REG, REGB, DI, 0)

// RAISE1 raises the bin of rank REG in a one-part chain whose bins start
// at OFF(SI), counted at NEXT, or jumps to STOP if its load is 255. Uses
// R13 and DX.
#define RAISE1(REG, OFF, NEXT, STOP) \
	MOVBLZX OFF(SI)(REG*1), R13 \
	INCB    R13B                \
	JEQ     STOP                \
	RAISEAT(R13, R13B, NEXT, OFF)

// PAIRAT sets CX to the pair table's entry for the ranks at bits HI and
// LO of AX and the coin at bit COIN: t[coin][bins[r0]<<8 | bins[part1+r1]],
// part 0 starting at P0(SI) and part 1 at P1(SI). Uses DX and R13; R8 is
// the table, R10 the mask. PAIR is PAIRAT of a chain whose part 1 starts
// sortedMax = 131072 bytes after its part 0, at SI.
#define PAIRAT(HI, LO, COIN, P0, P1) \
	MOVQ    AX, CX            \
	SHRQ    $HI, CX           \
	ANDQ    R10, CX           \
	MOVBLZX P0(SI)(CX*1), CX  \
	MOVQ    AX, DX            \
	SHRQ    $LO, DX           \
	ANDQ    R10, DX           \
	MOVBLZX P1(SI)(DX*1), DX  \
	SHLL    $8, CX            \
	ORL     DX, CX            \
	MOVQ    AX, R13           \
	SHRQ    $(COIN-16), R13   \
	ANDL    $0x10000, R13     \
	ORL     R13, CX           \
	MOVWLZX (R8)(CX*2), CX

#define PAIR(HI, LO, COIN) PAIRAT(HI, LO, COIN, 0, 131072)

// PLACEAT places the ball of the ranks at bits HI and LO of AX and the
// coin at bit COIN (PAIRAT) in the chain with parts at P0(SI) and P1(SI)
// and counters at NEXT, or jumps to STOP if it would raise a bin past
// 255. PLACE is PLACEAT of the chain at SI and DI.
#define PLACEAT(HI, LO, COIN, STOP, NEXT, P0, P1) \
	PAIRAT(HI, LO, COIN, P0, P1)  \
	TESTB CL, CL                  \
	JEQ   STOP                    \
	ANDL  $511, CX                \
	RAISEAT(CX, CL, NEXT, P0)

#define PLACE(HI, LO, COIN, STOP) PLACEAT(HI, LO, COIN, STOP, DI, 0, 131072)

// MAXRANK sets CX to the larger half of AX, times size (R10), over 2^32:
// the rank of the less loaded of a ball's two candidates in one part.
#define MAXRANK \
	MOVQ    AX, CX  \
	SHRQ    $32, CX \
	MOVL    AX, AX  \
	CMPQ    CX, AX  \
	CMOVQCS AX, CX  \
	IMULQ   R10, CX \
	SHRQ    $32, CX

// func oneLoop(bins []uint8, next *[256]uint32, x, end uint64, k uint) uint64
TEXT ·oneLoop(SB), NOSPLIT, $0-64
	MOVQ bins_base+0(FP), SI
	MOVQ next+24(FP), DI
	MOVQ x+32(FP), BX
	MOVQ end+40(FP), R9
	MOVQ $64, CX
	SUBQ k+48(FP), CX
	ANDQ $63, CX
	CONSTANTS

oneNext:
	CMPQ BX, R9
	JEQ  oneDone
	ADDQ R11, BX
	MIX
	SHRQ    CX, AX
	RAISE1(AX, 0, DI, oneStop)
	JMP     oneNext

oneStop:
	SUBQ R11, BX

oneDone:
	MOVQ BX, ret+56(FP)
	RET

// func max2Loop(bins []uint8, next *[256]uint32, x, end, size uint64) uint64
TEXT ·max2Loop(SB), NOSPLIT, $0-64
	MOVQ bins_base+0(FP), SI
	MOVQ next+24(FP), DI
	MOVQ x+32(FP), BX
	MOVQ end+40(FP), R9
	MOVQ size+48(FP), R10
	CONSTANTS

max2Next:
	CMPQ BX, R9
	JEQ  max2Done
	ADDQ R11, BX
	MIX

	MAXRANK
	RAISE1(CX, 0, DI, max2Stop)
	JMP     max2Next

max2Stop:
	SUBQ R11, BX

max2Done:
	MOVQ BX, ret+56(FP)
	RET

// func pairLoop(bins *[2 * sortedMax]uint8, next *[512]uint32, t *pairTable, x, end, mask uint64) uint64
TEXT ·pairLoop(SB), NOSPLIT, $0-56
	MOVQ bins+0(FP), SI
	MOVQ next+8(FP), DI
	MOVQ t+16(FP), R8
	MOVQ x+24(FP), BX
	MOVQ end+32(FP), R9
	MOVQ mask+40(FP), R10
	ANDQ $131071, R10
	CONSTANTS

pairNext:
	CMPQ BX, R9
	JEQ  pairDone
	ADDQ R11, BX
	MIX
	PLACE(32, 0, 63, pairStop)
	JMP   pairNext

pairStop:
	SUBQ R11, BX

pairDone:
	MOVQ BX, ret+48(FP)
	RET

// func halvesLoop(bins *[2 * sortedMax]uint8, next *[512]uint32, t *pairTable, x, end, mask uint64) (uint64, int)
TEXT ·halvesLoop(SB), NOSPLIT, $0-64
	MOVQ bins+0(FP), SI
	MOVQ next+8(FP), DI
	MOVQ t+16(FP), R8
	MOVQ x+24(FP), BX
	MOVQ end+32(FP), R9
	MOVQ mask+40(FP), R10
	ANDQ $0xffff, R10
	CONSTANTS

halvesNext:
	CMPQ BX, R9
	JEQ  halvesDone
	ADDQ R11, BX
	MIX

	// Ball 2i, from the high half.
	PLACE(48, 32, 63, halvesStopFirst)

	// Ball 2i+1, from the low half.
	PLACE(16, 0, 31, halvesStopSecond)
	JMP   halvesNext

halvesDone:
	MOVQ BX, ret+48(FP)
	MOVQ $0, ret1+56(FP) // stopDone
	RET

halvesStopFirst:
	SUBQ R11, BX
	MOVQ BX, ret+48(FP)
	MOVQ $1, ret1+56(FP) // stopFirst
	RET

halvesStopSecond:
	MOVQ BX, ret+48(FP)
	MOVQ $2, ret1+56(FP) // stopSecond
	RET

// func halvesLoop2(bins *[4 * sortedMax]uint8, nextA, nextB *[512]uint32, t *pairTable, xA, xB, words, mask uint64) (uint64, uint64, int, int)
//
// halvesLoop for two chains, A at SI and B 2·sortedMax = 262144 bytes
// after it (parts at 262144 and 393216), a word of A's then a word of B's.
// B's state is in R14, its counters at R15, and R9 counts the words left.
TEXT ·halvesLoop2(SB), NOSPLIT, $0-96
	MOVQ bins+0(FP), SI
	MOVQ nextA+8(FP), DI
	MOVQ nextB+16(FP), R15
	MOVQ t+24(FP), R8
	MOVQ xA+32(FP), BX
	MOVQ xB+40(FP), R14
	MOVQ words+48(FP), R9
	MOVQ mask+56(FP), R10
	ANDQ $0xffff, R10
	CONSTANTS
	MOVQ $0, ret2+80(FP)  // stopDone
	MOVQ $0, ret3+88(FP)  // stopDone
	TESTQ R9, R9
	JEQ   halves2Done

halves2Next:
	// A's word: ball 2i from the high half, ball 2i+1 from the low half.
	ADDQ R11, BX
	MIX
	PLACE(48, 32, 63, halves2StopFirstA)
	PLACE(16, 0, 31, halves2StopSecondA)

	// B's word.
	ADDQ R11, R14
	MIXOF(R14)
	PLACEAT(48, 32, 63, halves2StopFirstB, R15, 262144, 393216)
	PLACEAT(16, 0, 31, halves2StopSecondB, R15, 262144, 393216)
	DECQ R9
	JNE  halves2Next

halves2Done:
	MOVQ BX, ret+64(FP)
	MOVQ R14, ret1+72(FP)
	RET

halves2StopFirstA:
	SUBQ R11, BX
	MOVQ $1, ret2+80(FP) // stopFirst
	JMP  halves2Done

halves2StopSecondA:
	MOVQ $2, ret2+80(FP) // stopSecond
	JMP  halves2Done

halves2StopFirstB:
	SUBQ R11, R14
	MOVQ $1, ret3+88(FP) // stopFirst
	JMP  halves2Done

halves2StopSecondB:
	MOVQ $2, ret3+88(FP) // stopSecond
	JMP  halves2Done

// The other paired loops follow halvesLoop2: chain A at SI and DI, chain B
// at 262144(SI) and R15, states in BX and R14, R9 the words left; but a
// word is one ball, and a stop puts it back.

// func oneLoop2(bins *[4 * sortedMax]uint8, nextA, nextB *[256]uint32, xA, xB, words uint64, k uint) (uint64, uint64, int, int)
TEXT ·oneLoop2(SB), NOSPLIT, $0-88
	MOVQ bins+0(FP), SI
	MOVQ nextA+8(FP), DI
	MOVQ nextB+16(FP), R15
	MOVQ xA+24(FP), BX
	MOVQ xB+32(FP), R14
	MOVQ words+40(FP), R9
	MOVQ $64, CX
	SUBQ k+48(FP), CX
	ANDQ $63, CX
	CONSTANTS
	MOVQ  $0, ret2+72(FP) // stopDone
	MOVQ  $0, ret3+80(FP) // stopDone
	TESTQ R9, R9
	JEQ   one2Done

one2Next:
	ADDQ    R11, BX
	MIX
	SHRQ    CX, AX
	RAISE1(AX, 0, DI, one2StopA)
	ADDQ    R11, R14
	MIXOF(R14)
	SHRQ    CX, AX
	RAISE1(AX, 262144, R15, one2StopB)
	DECQ    R9
	JNE     one2Next

one2Done:
	MOVQ BX, ret+56(FP)
	MOVQ R14, ret1+64(FP)
	RET

one2StopA:
	SUBQ R11, BX
	MOVQ $1, ret2+72(FP) // stopFirst
	JMP  one2Done

one2StopB:
	SUBQ R11, R14
	MOVQ $1, ret3+80(FP) // stopFirst
	JMP  one2Done

// func max2Loop2(bins *[4 * sortedMax]uint8, nextA, nextB *[256]uint32, xA, xB, words, size uint64) (uint64, uint64, int, int)
TEXT ·max2Loop2(SB), NOSPLIT, $0-88
	MOVQ bins+0(FP), SI
	MOVQ nextA+8(FP), DI
	MOVQ nextB+16(FP), R15
	MOVQ xA+24(FP), BX
	MOVQ xB+32(FP), R14
	MOVQ words+40(FP), R9
	MOVQ size+48(FP), R10
	CONSTANTS
	MOVQ  $0, ret2+72(FP) // stopDone
	MOVQ  $0, ret3+80(FP) // stopDone
	TESTQ R9, R9
	JEQ   max22Done

max22Next:
	ADDQ    R11, BX
	MIX
	MAXRANK
	RAISE1(CX, 0, DI, max22StopA)
	ADDQ    R11, R14
	MIXOF(R14)
	MAXRANK
	RAISE1(CX, 262144, R15, max22StopB)
	DECQ    R9
	JNE     max22Next

max22Done:
	MOVQ BX, ret+56(FP)
	MOVQ R14, ret1+64(FP)
	RET

max22StopA:
	SUBQ R11, BX
	MOVQ $1, ret2+72(FP) // stopFirst
	JMP  max22Done

max22StopB:
	SUBQ R11, R14
	MOVQ $1, ret3+80(FP) // stopFirst
	JMP  max22Done
