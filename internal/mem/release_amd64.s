//go:build !race

#include "textflag.h"

// func storeRelease(w *uint64, v uint64)
// A plain MOV: under amd64's total store order every store is a release,
// and a call into assembly is opaque to the compiler, which keeps the
// stores before it in front.
TEXT ·storeRelease(SB), NOSPLIT, $0-16
	MOVQ	w+0(FP), AX
	MOVQ	v+8(FP), BX
	MOVQ	BX, (AX)
	RET

// func storeRelease32(w *uint32, v uint32)
TEXT ·storeRelease32(SB), NOSPLIT, $0-12
	MOVQ	w+0(FP), AX
	MOVL	v+8(FP), BX
	MOVL	BX, (AX)
	RET

// func storeHalves(dst *uint64, src *byte, n uintptr, hi uint64)
// For each of n words: dst's word = hi | the next 4 bytes of src
// (little-endian, zero-extended by MOVL), one plain 8-byte MOV each, in
// order.
TEXT ·storeHalves(SB), NOSPLIT, $0-32
	MOVQ	dst+0(FP), DI
	MOVQ	src+8(FP), SI
	MOVQ	n+16(FP), CX
	MOVQ	hi+24(FP), DX
	TESTQ	CX, CX
	JEQ	done
loop:
	MOVL	(SI), AX
	ORQ	DX, AX
	MOVQ	AX, (DI)
	ADDQ	$4, SI
	ADDQ	$8, DI
	DECQ	CX
	JNZ	loop
done:
	RET
