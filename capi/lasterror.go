package main

/*
// nccl.h without CUDA's headers: the CPU build needs no CUDA toolkit.
#cgo CFLAGS: -I${SRCDIR}/../include -DRINGO_NCCL_H_WITHOUT_CUDA
#include <stddef.h>
#include "nccl.h"

void ringoSetLastError(const char* msg, size_t n); // nccl_abi.c
*/
import "C"

import (
	"unicode/utf8"
	"unsafe"
)

// lastErrorBytes is the size of each of nccl_abi.c's last-error buffers.
const lastErrorBytes = 1024

// setLastError makes msg ncclGetLastError's text, cut to fit its buffer at a
// character boundary (callers decode it as UTF-8).
func setLastError(msg string) {
	if len(msg) >= lastErrorBytes {
		msg = msg[:lastErrorBytes-1]
		for len(msg) > 0 && !utf8.ValidString(msg) {
			msg = msg[:len(msg)-1]
		}
	}
	C.ringoSetLastError((*C.char)(unsafe.Pointer(unsafe.StringData(msg))), C.size_t(len(msg)))
}

// lastError returns ncclGetLastError's text.
func lastError() string { return C.GoString(C.ncclGetLastError(nil)) }

// errorString returns ncclGetErrorString's text for r.
func errorString(r result) string { return C.GoString(C.ncclGetErrorString(C.ncclResult_t(r))) }
