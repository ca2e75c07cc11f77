/*
 * mpi_allreduce: an MPI_Allreduce benchmark that prints nccl-tests' table,
 * the anchor that ringo's CPU path is compared against (see README.md here).
 *
 *   mpirun -np 2 mpi_allreduce [-b 8] [-e 128M] [-f 2 | -f 0 -i 1M]
 *                              [-n 20] [-w 5] [-c 1] [-d float]
 *
 * Every rank runs the same sweep; rank 0 prints. Per size and per placement
 * (out-of-place, then in-place with MPI_IN_PLACE): -w untimed calls, an
 * MPI_Barrier, -n timed calls between two MPI_Wtime, the per-call time
 * averaged over ranks; then -c checks: inputs of small integers whose sum is
 * exact in the datatype, one call, every output element compared with the
 * exact sum on every rank, mismatches summed over ranks. Exit status: 0, 1
 * when any element was wrong or MPI failed, 2 for bad arguments.
 *
 * Columns follow ringo's bench/table.go (nccl-tests' layout): time in us,
 * algbw = bytes / 1e9 / seconds, busbw = algbw * 2(n-1)/n.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

/* MPI_CHECK aborts the job with MPI's message when a call fails. */
#define MPI_CHECK(call)                                                        \
	do {                                                                       \
		int rc_ = (call);                                                      \
		if (rc_ != MPI_SUCCESS) mpi_fail(#call, rc_, __FILE__, __LINE__);     \
	} while (0)

static void mpi_fail(const char *what, int rc, const char *file, int line) {
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;
	if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "error %d", rc);
	fprintf(stderr, "mpi_allreduce: %s:%d: %s: %s\n", file, line, what, msg);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

enum dtype { T_INT8, T_UINT8, T_INT32, T_UINT32, T_INT64, T_UINT64, T_FLOAT, T_DOUBLE };

struct dtype_info {
	const char *name;  /* ringo's / nccl-tests' name, printed in the type column */
	const char *alias; /* another spelling accepted by -d */
	size_t size;
	double limit;      /* the largest magnitude every integer up to which is exact */
};

static const struct dtype_info dtypes[] = {
	[T_INT8] = {"int8", "char", 1, 127},
	[T_UINT8] = {"uint8", "uchar", 1, 255},
	[T_INT32] = {"int32", "int", 4, 2147483647.0},
	[T_UINT32] = {"uint32", "uint", 4, 4294967295.0},
	[T_INT64] = {"int64", "long", 8, 9.2e18},
	[T_UINT64] = {"uint64", "ulong", 8, 1.8e19},
	[T_FLOAT] = {"float", "float32", 4, 16777216.0},
	[T_DOUBLE] = {"double", "float64", 8, 9007199254740992.0},
};
#define NTYPES ((int)(sizeof dtypes / sizeof dtypes[0]))

static MPI_Datatype mpi_type(enum dtype t) {
	switch (t) {
	case T_INT8: return MPI_INT8_T;
	case T_UINT8: return MPI_UINT8_T;
	case T_INT32: return MPI_INT32_T;
	case T_UINT32: return MPI_UINT32_T;
	case T_INT64: return MPI_INT64_T;
	case T_UINT64: return MPI_UINT64_T;
	case T_FLOAT: return MPI_FLOAT;
	case T_DOUBLE: return MPI_DOUBLE;
	}
	return MPI_DATATYPE_NULL;
}

/* mix is a deterministic hash of (seed, rank, index), as ringo's bench/data.go. */
static inline uint64_t mix(uint64_t seed, int rank, int64_t i) {
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL ^ (uint64_t)rank * 0xbf58476d1ce4e5b9ULL ^ (uint64_t)i * 0x94d049bb133111ebULL;
	x ^= x >> 31;
	x *= 0x7fb5d6f1a1b3c4d5ULL;
	x ^= x >> 29;
	return x;
}

/* value is rank's input element i: an integer in 1..m. With m <= limit/n the
 * sum over n ranks is exact in the datatype, whatever the reduction order. */
static inline uint64_t value(uint64_t seed, int rank, int64_t i, uint64_t m) {
	return 1 + mix(seed, rank, i) % m;
}

/* want is the exact sum of element i over n ranks. */
static inline uint64_t want(uint64_t seed, int n, int64_t i, uint64_t m) {
	uint64_t s = 0;
	for (int q = 0; q < n; q++) s += value(seed, q, i, m);
	return s;
}

#define DEFINE_FILL_CHECK(T, tag)                                                     \
	static void fill_##tag(void *buf, int64_t count, int rank, uint64_t seed, uint64_t m) { \
		T *p = buf;                                                                    \
		for (int64_t i = 0; i < count; i++) p[i] = (T)value(seed, rank, i, m);          \
	}                                                                                  \
	static int64_t check_##tag(const void *buf, int64_t count, int n, uint64_t seed,  \
	                           uint64_t m) {                                           \
		const T *p = buf;                                                              \
		int64_t wrong = 0;                                                             \
		for (int64_t i = 0; i < count; i++)                                            \
			if (p[i] != (T)want(seed, n, i, m)) wrong++;                                \
		return wrong;                                                                  \
	}
DEFINE_FILL_CHECK(int8_t, int8)
DEFINE_FILL_CHECK(uint8_t, uint8)
DEFINE_FILL_CHECK(int32_t, int32)
DEFINE_FILL_CHECK(uint32_t, uint32)
DEFINE_FILL_CHECK(int64_t, int64)
DEFINE_FILL_CHECK(uint64_t, uint64)
DEFINE_FILL_CHECK(float, float)
DEFINE_FILL_CHECK(double, double)

static void fill(enum dtype t, void *buf, int64_t count, int rank, uint64_t seed, uint64_t m) {
	switch (t) {
	case T_INT8: fill_int8(buf, count, rank, seed, m); break;
	case T_UINT8: fill_uint8(buf, count, rank, seed, m); break;
	case T_INT32: fill_int32(buf, count, rank, seed, m); break;
	case T_UINT32: fill_uint32(buf, count, rank, seed, m); break;
	case T_INT64: fill_int64(buf, count, rank, seed, m); break;
	case T_UINT64: fill_uint64(buf, count, rank, seed, m); break;
	case T_FLOAT: fill_float(buf, count, rank, seed, m); break;
	case T_DOUBLE: fill_double(buf, count, rank, seed, m); break;
	}
}

static int64_t check(enum dtype t, const void *buf, int64_t count, int n, uint64_t seed, uint64_t m) {
	switch (t) {
	case T_INT8: return check_int8(buf, count, n, seed, m);
	case T_UINT8: return check_uint8(buf, count, n, seed, m);
	case T_INT32: return check_int32(buf, count, n, seed, m);
	case T_UINT32: return check_uint32(buf, count, n, seed, m);
	case T_INT64: return check_int64(buf, count, n, seed, m);
	case T_UINT64: return check_uint64(buf, count, n, seed, m);
	case T_FLOAT: return check_float(buf, count, n, seed, m);
	case T_DOUBLE: return check_double(buf, count, n, seed, m);
	}
	return count;
}

struct options {
	int64_t min_bytes, max_bytes, step_factor, step_bytes;
	int iters, warmup, checks;
	enum dtype type;
};

/* parse_size parses a non-negative byte count with an optional K, M or G
 * suffix (binary units), as ringo's and nccl-tests' -b/-e. */
static int parse_size(const char *s, int64_t *out) {
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (end == s || errno != 0 || v < 0) return -1;
	int64_t mult = 1;
	switch (*end) {
	case 'k': case 'K': mult = 1LL << 10; end++; break;
	case 'm': case 'M': mult = 1LL << 20; end++; break;
	case 'g': case 'G': mult = 1LL << 30; end++; break;
	}
	if (*end != '\0' || v > (1LL << 62) / mult) return -1;
	*out = v * mult;
	return 0;
}

static int parse_int(const char *s, long lo, long hi, long *out) {
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (end == s || *end != '\0' || errno != 0 || v < lo || v > hi) return -1;
	*out = v;
	return 0;
}

static void usage(FILE *f) {
	fprintf(f,
	        "usage: mpirun -np N mpi_allreduce [flags]\n"
	        "  -b SIZE  minimum size in bytes, K/M/G suffixes (default 8)\n"
	        "  -e SIZE  maximum size in bytes (default 128M)\n"
	        "  -f N     multiplicative size step, >= 2, or 0 for additive steps of -i (default 2)\n"
	        "  -i SIZE  additive size step when -f is 0 (default 1M)\n"
	        "  -n N     timed iterations per size, >= 1 (default 20)\n"
	        "  -w N     warm-up iterations per size, >= 0 (default 5)\n"
	        "  -c N     correctness checks per size, 0 turns them off (default 1)\n"
	        "  -d TYPE  float (default), double, int8, uint8, int32, uint32, int64, uint64\n"
	        "  -o OP    sum (the only op)\n"
	        "  -h       this message\n");
}

/* parse_args fills o; returns 0, 1 for -h, or -1 with msg set. */
static int parse_args(int argc, char **argv, struct options *o, char *msg, size_t msglen) {
	*o = (struct options){.min_bytes = 8, .max_bytes = 128LL << 20, .step_factor = 2, .step_bytes = 1LL << 20,
	                      .iters = 20, .warmup = 5, .checks = 1, .type = T_FLOAT};
	long v;
	int c;
	opterr = 0;
	while ((c = getopt(argc, argv, ":b:e:f:i:n:w:c:d:o:h")) != -1) {
		switch (c) {
		case 'b':
			if (parse_size(optarg, &o->min_bytes)) goto bad_value;
			break;
		case 'e':
			if (parse_size(optarg, &o->max_bytes)) goto bad_value;
			break;
		case 'i':
			if (parse_size(optarg, &o->step_bytes) || o->step_bytes == 0) goto bad_value;
			break;
		case 'f':
			if (parse_int(optarg, 0, 1L << 30, &v) || v == 1) goto bad_value;
			o->step_factor = v;
			break;
		case 'n':
			if (parse_int(optarg, 1, INT_MAX, &v)) goto bad_value;
			o->iters = (int)v;
			break;
		case 'w':
			if (parse_int(optarg, 0, INT_MAX, &v)) goto bad_value;
			o->warmup = (int)v;
			break;
		case 'c':
			if (parse_int(optarg, 0, INT_MAX, &v)) goto bad_value;
			o->checks = (int)v;
			break;
		case 'd': {
			int found = 0;
			for (int t = 0; t < NTYPES; t++) {
				if (strcmp(optarg, dtypes[t].name) == 0 || strcmp(optarg, dtypes[t].alias) == 0) {
					o->type = (enum dtype)t;
					found = 1;
				}
			}
			if (!found) goto bad_value;
			break;
		}
		case 'o':
			if (strcmp(optarg, "sum") != 0) goto bad_value;
			break;
		case 'h':
			return 1;
		case ':':
			snprintf(msg, msglen, "flag -%c needs a value", optopt);
			return -1;
		default:
			snprintf(msg, msglen, "unknown flag -%c", optopt);
			return -1;
		}
		continue;
	bad_value:
		snprintf(msg, msglen, "bad value %s for -%c", optarg, c);
		return -1;
	}
	if (optind < argc) {
		snprintf(msg, msglen, "unexpected argument %s", argv[optind]);
		return -1;
	}
	if (o->max_bytes < o->min_bytes) {
		snprintf(msg, msglen, "sizes %lld..%lld bytes are not a range", (long long)o->min_bytes, (long long)o->max_bytes);
		return -1;
	}
	if ((int64_t)(o->max_bytes / dtypes[o->type].size) > INT_MAX) {
		snprintf(msg, msglen, "-e %lld: more than %d elements, MPI's int count", (long long)o->max_bytes, INT_MAX);
		return -1;
	}
	return 0;
}

/* fmt_time formats microseconds as ringo's table.go (fmtTime). */
static const char *fmt_time(double us, char *buf, size_t len) {
	if (us >= 1e7)
		snprintf(buf, len, "%.0f", us);
	else if (us >= 1e4)
		snprintf(buf, len, "%.1f", us);
	else
		snprintf(buf, len, "%.2f", us);
	return buf;
}

static const char *fmt_wrong(int64_t n, char *buf, size_t len) {
	if (n < 0)
		snprintf(buf, len, "N/A");
	else
		snprintf(buf, len, "%lld", (long long)n);
	return buf;
}

/* fmt_shortest formats v with the fewest digits that read back as v, as Go's %g. */
static const char *fmt_shortest(double v, char *buf, size_t len) {
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, len, "%.*g", p, v);
		if (strtod(buf, NULL) == v) break;
	}
	return buf;
}

struct measure {
	double time_us, algbw, busbw;
	int64_t wrong; /* summed over ranks; -1: not checked */
};

struct sweep {
	const struct options *o;
	int rank, n;
	MPI_Datatype dt;
	void *send, *recv;
	uint64_t m; /* inputs are 1..m */
};

static void allreduce(const struct sweep *s, int in_place, int64_t count) {
	MPI_CHECK(MPI_Allreduce(in_place ? MPI_IN_PLACE : s->send, s->recv, (int)count, s->dt, MPI_SUM, MPI_COMM_WORLD));
}

static struct measure measure(const struct sweep *s, int64_t count, int in_place) {
	const struct options *o = s->o;
	size_t esize = dtypes[o->type].size;
	int64_t bytes = count * (int64_t)esize;
	struct measure m = {.wrong = -1};

	for (int i = 0; i < o->warmup; i++) allreduce(s, in_place, count);
	MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
	double t0 = MPI_Wtime();
	for (int i = 0; i < o->iters; i++) allreduce(s, in_place, count);
	double sec = (MPI_Wtime() - t0) / o->iters, total = 0;
	MPI_CHECK(MPI_Allreduce(&sec, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
	sec = total / s->n;
	m.time_us = sec * 1e6;
	if (sec > 0) {
		m.algbw = (double)bytes / 1e9 / sec;
		m.busbw = m.algbw * 2.0 * (s->n - 1) / s->n;
	}

	if (o->checks > 0) {
		int64_t wrong = 0, sum = 0;
		for (int rep = 1; rep <= o->checks; rep++) {
			void *in = in_place ? s->recv : s->send;
			if (!in_place) memset(s->recv, 0xA5, (size_t)bytes); /* a pattern no check expects */
			fill(o->type, in, count, s->rank, (uint64_t)rep, s->m);
			allreduce(s, in_place, count);
			wrong += check(o->type, s->recv, count, s->n, (uint64_t)rep, s->m);
		}
		MPI_CHECK(MPI_Allreduce(&wrong, &sum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
		m.wrong = sum;
	}
	return m;
}

static void print_header(FILE *f) {
	fprintf(f, "#%67s%36s\n", "out-of-place", "in-place");
	fprintf(f, "#%13s%14s%10s%8s%8s%9s%8s%8s%8s%9s%8s%8s%8s\n", "size", "count", "type", "redop", "root", "time",
	        "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
	fprintf(f, "#%13s%14s%10s%8s%8s%9s%8s%8s%8s%9s%8s%8s%8s\n", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)",
	        "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
}

int main(int argc, char **argv) {
	MPI_CHECK(MPI_Init(&argc, &argv));
	MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	int rank, n;
	MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &n));

	struct options o;
	char msg[256];
	int pa = parse_args(argc, argv, &o, msg, sizeof msg);
	if (pa != 0) {
		if (rank == 0) {
			if (pa < 0) fprintf(stderr, "mpi_allreduce: %s\n", msg);
			usage(pa < 0 ? stderr : stdout);
		}
		MPI_CHECK(MPI_Finalize());
		return pa < 0 ? 2 : 0;
	}

	const struct dtype_info *ti = &dtypes[o.type];
	uint64_t mmax = (uint64_t)floor(ti->limit / n);
	struct sweep s = {.o = &o, .rank = rank, .n = n, .dt = mpi_type(o.type), .m = mmax < 1 ? 1 : mmax > 64 ? 64 : mmax};
	size_t buf_bytes = (size_t)(o.max_bytes / (int64_t)ti->size) * ti->size;
	size_t alloc = buf_bytes > 0 ? buf_bytes : 64;
	if (posix_memalign(&s.send, 64, alloc) != 0 || posix_memalign(&s.recv, 64, alloc) != 0) {
		fprintf(stderr, "mpi_allreduce: rank %d: cannot allocate 2 x %zu bytes\n", rank, alloc);
		MPI_Abort(MPI_COMM_WORLD, 1);
		return 1;
	}
	memset(s.send, 0, alloc); /* fault the pages in before any timing */
	memset(s.recv, 0, alloc);

	if (rank == 0) {
		char version[MPI_MAX_LIBRARY_VERSION_STRING];
		int vlen = 0;
		MPI_CHECK(MPI_Get_library_version(version, &vlen));
		version[strcspn(version, ",\n")] = '\0';
		printf("# mpi_allreduce: %d ranks, %s,", n, version);
		for (int i = 1; i < argc; i++) printf(" %s", argv[i]);
		printf("\n# nThread 1 nRanks %d minBytes %lld maxBytes %lld step: ", n, (long long)o.min_bytes,
		       (long long)o.max_bytes);
		if (o.step_factor > 1)
			printf("%lld(factor)", (long long)o.step_factor);
		else
			printf("%lld(bytes)", (long long)o.step_bytes);
		printf(" warmup iters: %d iters: %d validation: %d\n", o.warmup, o.iters, o.checks);
		print_header(stdout);
		fflush(stdout);
	}

	int64_t wrong_total = 0;
	double bw_total = 0;
	int rows = 0;
	for (int64_t b = o.min_bytes; b <= o.max_bytes;) {
		int64_t count = b / (int64_t)ti->size, bytes = count * (int64_t)ti->size;
		struct measure oop = measure(&s, count, 0), ip = measure(&s, count, 1);
		if (rank == 0) {
			char t[32], w[32];
			printf("%14lld%14lld%10s%8s%8d", (long long)bytes, (long long)count, ti->name, "sum", -1);
			printf("%9s%8.2f%8.2f%8s", fmt_time(oop.time_us, t, sizeof t), oop.algbw, oop.busbw, fmt_wrong(oop.wrong, w, sizeof w));
			printf("%9s%8.2f%8.2f%8s\n", fmt_time(ip.time_us, t, sizeof t), ip.algbw, ip.busbw, fmt_wrong(ip.wrong, w, sizeof w));
			fflush(stdout);
		}
		wrong_total += (oop.wrong > 0 ? oop.wrong : 0) + (ip.wrong > 0 ? ip.wrong : 0);
		bw_total += oop.busbw + ip.busbw;
		rows++;

		int64_t next = o.step_factor > 1 ? (b == 0 ? 1 : b * o.step_factor) : b + o.step_bytes;
		if (next <= b) break;
		b = next;
	}
	if (rank == 0) {
		printf("# Out of bounds values : %lld %s\n", (long long)wrong_total, wrong_total > 0 ? "FAILED" : "OK");
		if (rows > 0) {
			char g[40];
			printf("# Avg bus bandwidth    : %s\n", fmt_shortest(bw_total / (2.0 * rows), g, sizeof g));
		}
		fflush(stdout);
	}

	free(s.send);
	free(s.recv);
	MPI_CHECK(MPI_Finalize());
	return wrong_total > 0 ? 1 : 0;
}
