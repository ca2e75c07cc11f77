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
