//go:build cuda

#include "nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

// From nvml.h (NVML API version 11), stable across drivers.
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef int nvmlReturn_t;
typedef struct {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

static nvmlReturn_t (*pInit)(void);
static nvmlReturn_t (*pHandleByPciBusId)(const char*, nvmlDevice_t*);
static nvmlReturn_t (*pNvLinkState)(nvmlDevice_t, unsigned, int*);
static nvmlReturn_t (*pNvLinkVersion)(nvmlDevice_t, unsigned, unsigned*);
static nvmlReturn_t (*pNvLinkRemotePciInfo)(nvmlDevice_t, unsigned, nvmlPciInfo_t*);
static nvmlReturn_t (*pNvLinkRemoteDeviceType)(nvmlDevice_t, unsigned, int*); // r460 and later
static const char* (*pErrorString)(nvmlReturn_t);

int ringoNvmlOpen(char* err, size_t errlen) {
  void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    snprintf(err, errlen, "%s", dlerror());
    return -1;
  }
#define LOAD(p, name, required)                                              \
  *(void**)&p = dlsym(h, name);                                              \
  if (p == NULL && required) {                                               \
    snprintf(err, errlen, "libnvidia-ml.so.1 has no %s", name);              \
    return -1;                                                               \
  }
  LOAD(pInit, "nvmlInit_v2", 1);
  LOAD(pHandleByPciBusId, "nvmlDeviceGetHandleByPciBusId_v2", 1);
  LOAD(pNvLinkState, "nvmlDeviceGetNvLinkState", 1);
  LOAD(pNvLinkVersion, "nvmlDeviceGetNvLinkVersion", 1);
  LOAD(pNvLinkRemotePciInfo, "nvmlDeviceGetNvLinkRemotePciInfo_v2", 1);
  LOAD(pNvLinkRemoteDeviceType, "nvmlDeviceGetNvLinkRemoteDeviceType", 0);
  LOAD(pErrorString, "nvmlErrorString", 0);
#undef LOAD
  nvmlReturn_t r = pInit();
  if (r != 0) {
    snprintf(err, errlen, "nvmlInit: %s", ringoNvmlErrorString(r));
    return -1;
  }
  return 0;
}

int ringoNvmlLink(const char* busId, unsigned link, int* active, unsigned* version, char* remote, size_t remotelen,
                  int* remoteType) {
  *active = 0;
  *version = 0;
  remote[0] = 0;
  *remoteType = 255;
  nvmlDevice_t dev;
  nvmlReturn_t r = pHandleByPciBusId(busId, &dev);
  if (r != 0) return r;
  int state = 0;
  r = pNvLinkState(dev, link, &state);
  if (r != 0) return r;
  *active = state != 0;
  if (!*active) return 0;
  if (pNvLinkVersion(dev, link, version) != 0) *version = 0;
  nvmlPciInfo_t pci;
  memset(&pci, 0, sizeof pci);
  if (pNvLinkRemotePciInfo(dev, link, &pci) == 0) snprintf(remote, remotelen, "%s", pci.busId);
  int t = 255;
  if (pNvLinkRemoteDeviceType != NULL && pNvLinkRemoteDeviceType(dev, link, &t) == 0) *remoteType = t;
  return 0;
}

const char* ringoNvmlErrorString(int r) {
  if (pErrorString != NULL) return pErrorString(r);
  return "NVML error";
}
