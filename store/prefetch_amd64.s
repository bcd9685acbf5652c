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
