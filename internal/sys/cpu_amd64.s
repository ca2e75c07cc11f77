#include "textflag.h"

// func cpuSegLimit() uint32
TEXT ·cpuSegLimit(SB), NOSPLIT, $0-4
	MOVL $123, AX          // the per-core segment's selector: GDT entry 15, RPL 3
	MOVL $0xffffffff, BX   // left as it is when the selector is not valid
	LSLL AX, BX
	MOVL BX, ret+0(FP)
	RET
