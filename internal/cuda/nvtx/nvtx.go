//go:build cuda

package nvtx

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include <nvtx3/nvToolsExt.h>

static nvtxRangeId_t ringoRangeStart(nvtxDomainHandle_t d, nvtxStringHandle_t msg, uint32_t color, uint32_t category, uint64_t payload) {
	nvtxEventAttributes_t a = {0};
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.category = category;
	a.colorType = NVTX_COLOR_ARGB;
	a.color = color;
	a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
	a.payload.ullValue = payload;
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = msg;
	return nvtxDomainRangeStartEx(d, &a);
}
*/
import "C"

import (
	"sync"
	"unsafe"
)

// Message is a string registered with the domain: a range's name.
type Message struct{ h C.nvtxStringHandle_t }

// Range is a started range, for End.
type Range uint64

// domain is ringo's NVTX domain, made at the first use; nil when disabled.
var domain = sync.OnceValue(func() C.nvtxDomainHandle_t {
	if off, err := Disabled(); off || err != nil { // a bad value failed the communicator's init
		return nil
	}
	name := C.CString("ringo")
	defer C.free(unsafe.Pointer(name))
	return C.nvtxDomainCreateA(name)
})

// Enabled reports whether ranges are recorded (NCCL_NVTX_DISABLE is not 1).
func Enabled() bool { return domain() != nil }

// Register registers s as a range's message. It allocates: callers keep
// the Message and register each name once.
func Register(s string) Message {
	d := domain()
	if d == nil {
		return Message{}
	}
	cs := C.CString(s)
	defer C.free(unsafe.Pointer(cs))
	return Message{C.nvtxDomainRegisterStringA(d, cs)}
}

// NameCategory names category id (not 0) in the domain.
func NameCategory(id uint32, name string) {
	d := domain()
	if d == nil {
		return
	}
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	C.nvtxDomainNameCategoryA(d, C.uint32_t(id), cs)
}

// Start starts a range named m, with an ARGB color, a category and a
// payload. It does not allocate.
func Start(m Message, color, category uint32, payload uint64) Range {
	d := domain()
	if d == nil {
		return 0
	}
	return Range(C.ringoRangeStart(d, m.h, C.uint32_t(color), C.uint32_t(category), C.uint64_t(payload)))
}

// End ends a range Start returned, from any goroutine.
func End(r Range) {
	if d := domain(); d != nil {
		C.nvtxDomainRangeEnd(d, C.nvtxRangeId_t(r))
	}
}
