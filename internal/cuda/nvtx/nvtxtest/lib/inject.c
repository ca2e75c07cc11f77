/*
 * A stand-in for Nsight Systems' NVTX injection library, for tests: loaded
 * by NVTX itself through NVTX_INJECTION64_PATH (as nsys loads its own), it
 * takes over the domain calls and appends one line per event to the file
 * named by RINGO_NVTX_LOG:
 *
 *   domain D NAME                       nvtxDomainCreateA
 *   category D ID NAME                  nvtxDomainNameCategoryA
 *   start D RANGE CATEGORY COLOR PAYLOAD MESSAGE   nvtxDomainRangeStartEx
 *   end D RANGE                         nvtxDomainRangeEnd
 *
 * D is the domain's number (1, 2, ... in creation order), RANGE the
 * range's id (1, 2, ...), COLOR hex ARGB, PAYLOAD the unsigned 64-bit
 * payload (or - when there is none). Build: cc -shared -fPIC -o libinject.so inject.c
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

struct nvtxDomainRegistration_st { int id; };
struct nvtxStringRegistration_st { char *s; };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int logfd = -1;
static int domains;
static uint64_t ranges;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...) {
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0) return;
	if (n > (int)sizeof line - 2) n = sizeof line - 2;
	line[n++] = '\n';
	if (logfd >= 0) (void)!write(logfd, line, n); /* O_APPEND: one line per write */
}

static int domainID(nvtxDomainHandle_t d) { return d ? d->id : 0; }

static nvtxDomainHandle_t domainCreate(const char *name) {
	nvtxDomainHandle_t d = malloc(sizeof *d);
	pthread_mutex_lock(&mu);
	d->id = ++domains;
	logf_("domain %d %s", d->id, name);
	pthread_mutex_unlock(&mu);
	return d;
}

static nvtxStringHandle_t registerString(nvtxDomainHandle_t d, const char *s) {
	(void)d;
	nvtxStringHandle_t h = malloc(sizeof *h);
	h->s = strdup(s);
	return h;
}

static void nameCategory(nvtxDomainHandle_t d, uint32_t id, const char *name) {
	pthread_mutex_lock(&mu);
	logf_("category %d %u %s", domainID(d), id, name);
	pthread_mutex_unlock(&mu);
}

static nvtxRangeId_t rangeStart(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
	const char *msg = "?";
	if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED && a->message.registered)
		msg = a->message.registered->s;
	else if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii)
		msg = a->message.ascii;
	char payload[32] = "-";
	if (a->payloadType == NVTX_PAYLOAD_TYPE_UNSIGNED_INT64)
		snprintf(payload, sizeof payload, "%llu", (unsigned long long)a->payload.ullValue);
	pthread_mutex_lock(&mu);
	nvtxRangeId_t id = ++ranges;
	logf_("start %d %llu %u %08x %s %s", domainID(d), (unsigned long long)id, a->category, a->color, payload, msg);
	pthread_mutex_unlock(&mu);
	return id;
}

static void rangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) {
	pthread_mutex_lock(&mu);
	logf_("end %d %llu", domainID(d), (unsigned long long)id);
	pthread_mutex_unlock(&mu);
}

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable) {
	const char *path = getenv("RINGO_NVTX_LOG");
	if (!path) return 0; /* 0: not attached, NVTX calls stay no-ops */
	logfd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0) return 0;
	const NvtxExportTableCallbacks *cb = getExportTable(NVTX_ETID_CALLBACKS);
	NvtxFunctionTable t = 0;
	unsigned int n = 0;
	if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) || n < NVTX_CBID_CORE2_DomainCreateA) return 0;
	*t[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)domainCreate;
	*t[NVTX_CBID_CORE2_DomainRegisterStringA] = (NvtxFunctionPointer)registerString;
	*t[NVTX_CBID_CORE2_DomainNameCategoryA] = (NvtxFunctionPointer)nameCategory;
	*t[NVTX_CBID_CORE2_DomainRangeStartEx] = (NvtxFunctionPointer)rangeStart;
	*t[NVTX_CBID_CORE2_DomainRangeEnd] = (NvtxFunctionPointer)rangeEnd;
	return 1;
}
