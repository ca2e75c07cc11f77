//go:build cuda

// The library's cuInit.
//
// gorgonia.org/cu, which ringo's CUDA layer uses, calls cuInit(0) from a Go
// package initialiser — when the library is loaded — and exits the process
// when it fails, as it does on a machine without a GPU. A program that loads
// libnccl.so.2 must neither die there nor have the driver initialised behind
// its back (a process that forks before it uses CUDA depends on that).
//
// So every reference to cuInit inside the library binds to this hidden
// definition, which does nothing; the symbol is not exported, and the
// program's own cuInit calls reach the driver as before. ringoCudaInit calls
// the driver's cuInit, found with dlsym, once, on the library's first use of
// CUDA (capi calls it before anything that reaches the driver).

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

typedef int ringoCUresult; // CUresult; cuda.h is not included, as it declares cuInit

enum { ringoCudaErrorSharedObjectInitFailed = 303 }; // CUDA_ERROR_SHARED_OBJECT_INIT_FAILED

__attribute__((visibility("hidden"))) ringoCUresult cuInit(unsigned int flags) {
	(void)flags;
	return 0;
}

static pthread_once_t ringoCudaOnce = PTHREAD_ONCE_INIT;
static ringoCUresult ringoCudaResult = ringoCudaErrorSharedObjectInitFailed;

static void ringoCudaInitOnce(void) {
	void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (lib == NULL) return;
	ringoCUresult (*real)(unsigned int) = (ringoCUresult (*)(unsigned int))dlsym(lib, "cuInit");
	if (real == NULL) return;
	ringoCudaResult = real(0);
}

// ringoCudaInit returns the result of the driver's cuInit(0), called once.
int ringoCudaInit(void) {
	pthread_once(&ringoCudaOnce, ringoCudaInitOnce);
	return ringoCudaResult;
}
