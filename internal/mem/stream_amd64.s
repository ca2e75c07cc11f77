#include "textflag.h"

// func streamCopy(dst, src *byte, n uintptr)
// Copies n bytes, a positive multiple of 64, from src to dst (16-byte
// aligned) with non-temporal stores (SSE2 MOVNTDQ, in every amd64), then
// fences them: later stores — the post that publishes the data — are seen
// after them.
TEXT ·streamCopy(SB), NOSPLIT, $0-24
	MOVQ	dst+0(FP), DI
	MOVQ	src+8(FP), SI
	MOVQ	n+16(FP), BX
loop:
	MOVOU	(SI), X0
	MOVOU	16(SI), X1
	MOVOU	32(SI), X2
	MOVOU	48(SI), X3
	MOVNTO	X0, (DI)
	MOVNTO	X1, 16(DI)
	MOVNTO	X2, 32(DI)
	MOVNTO	X3, 48(DI)
	ADDQ	$64, SI
	ADDQ	$64, DI
	SUBQ	$64, BX
	JNZ	loop
	SFENCE
	RET
