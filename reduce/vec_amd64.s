#include "textflag.h"

// SUMS(name, MOV, ADD) is func name(d, a, b unsafe.Pointer, n uintptr):
// d = a + b (or a × b, with MULPS or MULPD for ADD) over n bytes, a
// positive multiple of 64, 16 bytes a register (SSE2, in every amd64),
// each lane's sum a's register plus b's, as Go's
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

// func prodF32(d, a, b unsafe.Pointer, n uintptr)
SUMS(·prodF32, MOVUPS, MULPS)

// func prodF64(d, a, b unsafe.Pointer, n uintptr)
SUMS(·prodF64, MOVUPD, MULPD)

// LANES(sym, v) is a 16-byte constant sym with the 64-bit value v (two
// 32-bit lanes) twice: the constants below, each in every 32-bit lane.
#define LANES(sym, v) \
DATA	sym<>+0(SB)/8, v \
DATA	sym<>+8(SB)/8, v \
GLOBL	sym<>(SB), RODATA|NOPTR, $16

LANES(bf16one, $0x0000000100000001)
LANES(bf16half, $0x00007fff00007fff)
LANES(mag32, $0x7fffffff7fffffff) // a float32's magnitude bits
LANES(inf32, $0x7f8000007f800000) // a float32 infinity's pattern
LANES(bf16sign, $0x0000800000008000)
LANES(bf16nan, $0x00007fc000007fc0)

// ROUND(V, T, M, N) rounds V's float32 lanes to BFloat16 as BFloat16From
// does — a NaN to the canonical NaN with its sign, any other value to the
// nearest, ties to even — each result sign-extended in its lane, for
// PACKSSLW to narrow without saturating. T, M and N are scratch; X9–X14
// hold the constants.
#define ROUND(V, T, M, N) \
	MOVO	V, T \
	PSRLL	$16, T \
	PAND	X9, T \
	PADDL	X10, T \
	PADDL	V, T \
	PSRLL	$16, T \
	MOVO	V, M \
	PAND	X11, M \
	PCMPGTL	X12, M \
	MOVO	V, N \
	PSRLL	$16, N \
	PAND	X13, N \
	POR	X14, N \
	PAND	M, N \
	PANDN	T, M \
	POR	N, M \
	PSLLL	$16, M \
	PSRAL	$16, M \
	MOVO	M, V

// func sumBF16x8(d, a, b unsafe.Pointer, n uintptr)
//
// d = a + b in BFloat16 over n bytes, a positive multiple of 16: eight
// elements a register, widened to float32 (a shift: zeros interleaved
// below them), added with a's lanes as the destination, as sumBF16's
// a + b, and rounded back (ROUND), so the results are sumBF16's bits.
// Each 16-byte block is loaded before it is stored: d may be a or b.
TEXT ·sumBF16x8(SB), NOSPLIT, $0-32
	MOVQ	d+0(FP), DI
	MOVQ	a+8(FP), SI
	MOVQ	b+16(FP), DX
	MOVQ	n+24(FP), BX
	PXOR	X8, X8
	MOVOU	bf16one<>(SB), X9
	MOVOU	bf16half<>(SB), X10
	MOVOU	mag32<>(SB), X11
	MOVOU	inf32<>(SB), X12
	MOVOU	bf16sign<>(SB), X13
	MOVOU	bf16nan<>(SB), X14
bf16loop:
	MOVOU	(SI), X0
	MOVOU	(DX), X1
	MOVO	X8, X2
	PUNPCKLWL	X0, X2
	MOVO	X8, X3
	PUNPCKHWL	X0, X3
	MOVO	X8, X4
	PUNPCKLWL	X1, X4
	MOVO	X8, X5
	PUNPCKHWL	X1, X5
	ADDPS	X4, X2
	ADDPS	X5, X3
	ROUND(X2, X4, X5, X6)
	ROUND(X3, X4, X5, X6)
	PACKSSLW	X3, X2
	MOVOU	X2, (DI)
	ADDQ	$16, SI
	ADDQ	$16, DX
	ADDQ	$16, DI
	SUBQ	$16, BX
	JNZ	bf16loop
	RET

LANES(f32maxnan, $0x807ffffe807ffffe)
LANES(f32minnan, $0x7f8000017f800001)

// KEY(V, K, S, T) sets K to the keys of V's float32 patterns, as
// kernels_minmax.go's key orders them — the magnitude, or minus one more
// than it for a negative value (its complement) — and a NaN's to X13's
// (past the worst number's, so the other operand wins). S and T are
// scratch; X11 holds the magnitude mask, X12 the infinity.
#define KEY(V, K, S, T) \
	MOVO	V, K \
	PAND	X11, K \
	MOVO	K, S \
	PCMPGTL	X12, S \
	MOVO	V, T \
	PSRAL	$31, T \
	PXOR	T, K \
	MOVO	S, T \
	PAND	X13, T \
	PANDN	K, S \
	POR	T, S \
	MOVO	S, K

// MINMAX(name, nan, LOW, HIGH) is func name(d, a, b unsafe.Pointer, n
// uintptr): d = a or b by their keys (KEY) over n bytes, a positive
// multiple of 16, four float32 lanes a register: b's where HIGH's key is
// greater than LOW's — b's greater for maxNum (LOW = a's keys, HIGH =
// b's), lesser for minNum (the other way) — else a's, as maxNumLoop and
// minNumLoop choose. nan is the NaN's key. Each 16-byte block is loaded
// before it is stored: d may be a or b.
#define MINMAX(name, nan, LOW, HIGH) \
TEXT name(SB), NOSPLIT, $0-32 \
	MOVQ	d+0(FP), DI \
	MOVQ	a+8(FP), SI \
	MOVQ	b+16(FP), DX \
	MOVQ	n+24(FP), BX \
	MOVOU	mag32<>(SB), X11 \
	MOVOU	inf32<>(SB), X12 \
	MOVOU	nan<>(SB), X13 \
loop: \
	MOVOU	(SI), X0 \
	MOVOU	(DX), X1 \
	KEY(X0, X2, X4, X5) \
	KEY(X1, X3, X4, X5) \
	PCMPGTL	LOW, HIGH \
	MOVO	HIGH, X4 \
	PAND	X1, X4 \
	PANDN	X0, HIGH \
	POR	X4, HIGH \
	MOVOU	HIGH, (DI) \
	ADDQ	$16, SI \
	ADDQ	$16, DX \
	ADDQ	$16, DI \
	SUBQ	$16, BX \
	JNZ	loop \
	RET

// func maxF32(d, a, b unsafe.Pointer, n uintptr)
MINMAX(·maxF32, f32maxnan, X2, X3)

// func minF32(d, a, b unsafe.Pointer, n uintptr)
MINMAX(·minF32, f32minnan, X3, X2)
