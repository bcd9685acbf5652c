//go:build amd64 && !purego

#include "textflag.h"

// func prefetch(base *byte, idx []uint64)
TEXT ·prefetch(SB), NOSPLIT, $0-32
	MOVQ base+0(FP), AX
	MOVQ idx_base+8(FP), SI
	MOVQ idx_len+16(FP), CX
	TESTQ CX, CX
	JEQ done
loop:
	MOVQ (SI), DX
	PREFETCHT0 (AX)(DX*1)
	ADDQ $8, SI
	DECQ CX
	JNE loop
done:
	RET
