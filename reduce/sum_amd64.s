#include "textflag.h"

// SUMS(name, MOV, ADD) is func name(d, a, b unsafe.Pointer, n uintptr):
// d = a + b over n bytes, a positive multiple of 64, 16 bytes a register
// (SSE2, in every amd64), each lane's sum a's register plus b's, as Go's
// scalar a[i] + b[i] (ADDSS/ADDSD with a's value as the destination), so
// even NaN payloads come out alike. Every load of a 64-byte block comes
// before its stores: d may be a or b.
#define SUMS(name, MOV, ADD) \
TEXT name(SB), NOSPLIT, $0-32 \
	MOVQ	d+0(FP), DI \
	MOVQ	a+8(FP), SI \
	MOVQ	b+16(FP), DX \
	MOVQ	n+24(FP), BX \
loop: \
	MOV	(SI), X0 \
	MOV	16(SI), X1 \
	MOV	32(SI), X2 \
	MOV	48(SI), X3 \
	MOV	(DX), X4 \
	MOV	16(DX), X5 \
	MOV	32(DX), X6 \
	MOV	48(DX), X7 \
	ADD	X4, X0 \
	ADD	X5, X1 \
	ADD	X6, X2 \
	ADD	X7, X3 \
	MOV	X0, (DI) \
	MOV	X1, 16(DI) \
	MOV	X2, 32(DI) \
	MOV	X3, 48(DI) \
	ADDQ	$64, SI \
	ADDQ	$64, DX \
	ADDQ	$64, DI \
	SUBQ	$64, BX \
	JNZ	loop \
	RET

// func sumF32(d, a, b unsafe.Pointer, n uintptr)
SUMS(·sumF32, MOVUPS, ADDPS)

// func sumF64(d, a, b unsafe.Pointer, n uintptr)
SUMS(·sumF64, MOVUPD, ADDPD)
