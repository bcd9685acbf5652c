//go:build amd64 && !purego

#include "textflag.h"

// The sorted mode's loops (sorted_loops.go has their Go twins and what
// they do). Each loads its arguments itself, written out rather than in
// a shared macro, so that go vet checks their frame offsets. Registers
// common to all four:
//	SI bins, DI next, BX the stream state x, R9 end,
//	R11 golden, R12 wyMix (wyrand's constants, rng.go),
//	AX the word u = mix(x) (MULQ also writes DX).

// MIX sets AX to mix(BX) = hi ^ lo of BX · (BX ^ wyMix), using DX.
#define MIX \
	MOVQ R12, AX \
	XORQ BX, AX  \
	MULQ BX      \
	XORQ DX, AX

#define CONSTANTS \
	MOVQ $0xa0761d6478bd642f, R11 \
	MOVQ $0xe7037ed1a0b428db, R12

// RAISE raises the first bin below level REG's load (REG = the new load,
// or part<<8 | new load): p = next[REG]; bins[p] = REG; next[REG] = p+1.
// Uses DX.
#define RAISE(REG, REGB) \
	MOVL (DI)(REG*4), DX   \
	MOVB REGB, (SI)(DX*1)  \
	INCL DX                \
	MOVL DX, (DI)(REG*4)

// PAIR sets CX to the pair table's entry for the ranks at bits HI and LO
// of AX and the coin at bit COIN: t[coin][bins[r0]<<8 | bins[part1+r1]],
// part 1 starting at sortedMax = 131072. Uses DX and R13; R8 is the
// table, R10 the mask.
#define PAIR(HI, LO, COIN) \
	MOVQ    AX, CX                \
	SHRQ    $HI, CX               \
	ANDQ    R10, CX               \
	MOVBLZX (SI)(CX*1), CX        \
	MOVQ    AX, DX                \
	SHRQ    $LO, DX               \
	ANDQ    R10, DX               \
	MOVBLZX 131072(SI)(DX*1), DX  \
	SHLL    $8, CX                \
	ORL     DX, CX                \
	MOVQ    AX, R13               \
	SHRQ    $(COIN-16), R13       \
	ANDL    $0x10000, R13         \
	ORL     R13, CX               \
	MOVWLZX (R8)(CX*2), CX

// PLACE places the ball of the ranks at bits HI and LO of AX and the coin
// at bit COIN (PAIR), or jumps to STOP if it would raise a bin past 255.
#define PLACE(HI, LO, COIN, STOP) \
	PAIR(HI, LO, COIN) \
	TESTB CL, CL       \
	JEQ   STOP         \
	ANDL  $511, CX     \
	RAISE(CX, CL)

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
	MOVBLZX (SI)(AX*1), R13
	INCB    R13B
	JEQ     oneStop
	RAISE(R13, R13B)
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

	// The larger half of u, times size, over 2^32.
	MOVQ    AX, CX
	SHRQ    $32, CX
	MOVL    AX, AX
	CMPQ    CX, AX
	CMOVQCS AX, CX
	IMULQ   R10, CX
	SHRQ    $32, CX
	MOVBLZX (SI)(CX*1), R13
	INCB    R13B
	JEQ     max2Stop
	RAISE(R13, R13B)
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
