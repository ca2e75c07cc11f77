// nvml.h: NVLink queries through NVML, loaded with dlopen at run time so
// that ringo has no link-time dependency on libnvidia-ml. The few NVML
// types used are declared in nvml.c (as NCCL's nvmlwrap does), so no NVML
// header is needed to build either.
#include <stddef.h>

// ringoNvmlOpen loads libnvidia-ml.so.1 and initialises it. It returns 0,
// or -1 with a message in err.
int ringoNvmlOpen(char* err, size_t errlen);

// ringoNvmlLink describes link `link` of the GPU at PCI address busId:
// *active is 1 when the link is up; then *version is NVML's NVLink version
// code (0 when not reported), remote the PCI address of the other end
// ("" when not reported) and *remoteType NVML's device type of it (0 GPU,
// 1 IBM NPU, 2 NVSwitch, 255 when not reported). It returns NVML's status
// (0 on success; a link number past the GPU's last gives a non-zero one).
int ringoNvmlLink(const char* busId, unsigned link, int* active, unsigned* version, char* remote, size_t remotelen,
                  int* remoteType);

// ringoNvmlErrorString names an NVML status.
const char* ringoNvmlErrorString(int r);
