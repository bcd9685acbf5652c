//go:build !purego

#include "textflag.h"

// func prefetchRange(p unsafe.Pointer, n uintptr)
// PREFETCHT0 every 64-byte line that [p, p+n) touches.
TEXT ·prefetchRange(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), BX
	TESTQ BX, BX
	JZ done
	LEAQ -1(AX)(BX*1), BX // last byte
	ANDQ $~63, AX
loop:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	CMPQ AX, BX
	JLS loop
done:
	RET

// func prefetch5(a, b, c, d, e unsafe.Pointer)
// PREFETCHW the lines of a and c, PREFETCHT0 those of b, d and e. The Go
// assembler has no PREFETCHW mnemonic: 0F 0D /1 is PREFETCHW m8, and
// 08 the ModRM byte for (AX). CPUs without PREFETCHW (Intel before
// Broadwell) run it as a NOP.
TEXT ·prefetch5(SB), NOSPLIT|NOFRAME, $0-40
	MOVQ a+0(FP), AX
	BYTE $0x0f; BYTE $0x0d; BYTE $0x08 // PREFETCHW (AX)
	MOVQ b+8(FP), AX
	PREFETCHT0 (AX)
	MOVQ c+16(FP), AX
	BYTE $0x0f; BYTE $0x0d; BYTE $0x08 // PREFETCHW (AX)
	MOVQ d+24(FP), AX
	PREFETCHT0 (AX)
	MOVQ e+32(FP), AX
	PREFETCHT0 (AX)
	RET
