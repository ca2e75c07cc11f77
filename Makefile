# ringo — every build, test and benchmark step has a target here.
#
#   make            build everything (bin/ringo; the CUDA half too when nvcc is installed;
#                   without a C compiler, everything but capi/)
#   make test       what CI runs: installs what it needs (make deps), then gofmt check,
#                   go vet (plain and with the ibverbs and cuda tags), libnccl.so.2 once (its
#                   C ABI test needs it), go test -race ./... (with every fuzz target's seeds,
#                   the kernels' lock check, make bench with the CUDA toolkit hidden) and
#                   the ibverbs- and cuda-tagged packages that run without hardware, the
#                   cuda-tagged build and the GPU bundle. No timed fuzzing, no kernel rebuild:
#                   from a fresh clone on 2 cores, ~6 min (Go's build cache warm), ~11 (empty)
#   make deps       install the toolchain: make, gcc, and Debian's CUDA 11.8 toolkit
#   make kernels    regenerate kernels/fatbin (a module per compile unit kernels/src/*.cu,
#                   built in parallel) and kernels/fatbin.lock with nvcc
#   make check-kernels  rebuild the modules with nvcc and compare them with the committed ones
#   make gpu-bundle build/gpu.tar.xz: the cuda-tagged binaries and tests, libnccl.so.2,
#                   nccl-tests and run.sh for the GPU machine (scripts/gpu-bundle.sh)
#   make libnccl    build/lib/libnccl.so.2: the C ABI (capi/), a stand-in for NCCL's library,
#                   checked for its SONAME and every function of include/nccl.h
#   make bench      the CPU benchmark: ringo bench, one process per rank over shared memory
#   make bench-net  the socket transport between two network namespaces next to raw
#                   TCP (iperf3) between them, same run (root; installs iperf3)
#   make bench-cpu-vs-mpi  ringo bench next to Open MPI's MPI_Allreduce and Gloo's all-reduce,
#                   same sizes, and ratio tables (installs Open MPI and python3-torch if missing;
#                   GLOO=0 leaves Gloo out; bench/anchors/)
#   make mpi-deps   install Open MPI (openmpi-bin, libopenmpi-dev) and python3-torch if missing
#   make fuzz       every fuzz target for FUZZTIME each
#   make generate   regenerate generated code (stringer)

GO       ?= go
BIN      := bin
FUZZTIME ?= 60s

# make bench: ranks default to the machine's cores (at least 2), sizes 8 B … 128 MiB.
BENCH_RANKS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -lt 2 ] && n=2; echo $$n)
BENCH_FLAGS ?= -b 8 -e 128M -f 2 -n 20 -w 5 -c 1

# make bench-cpu-vs-mpi: ranks of both benchmarks, and their common flags.
BENCH_MPI_NP    ?= 2
BENCH_MPI_FLAGS ?= -b 8 -e 128M -f 2 -n 20 -w 5 -c 1

# make bench-net: ringo bench's flags (2 ranks, one per namespace).
BENCH_NET_FLAGS ?= -b 1M -e 512M -f 2 -n 10 -w 3

.PHONY: all build build-cuda test test-go vet fmt-check deps kernels check-kernels gpu-bundle libnccl bench bench-net bench-cpu-vs-mpi mpi-deps fuzz generate clean

# The kernels: each kernels/src/*.cu is a compile unit, built by nvcc into
# its own module kernels/fatbin/UNIT.fatbin (package kernels embeds every
# one); the units build in parallel. nvcc's flags are in kernels/nvcc.flags
# (the one place: the lock hashes them). kernels/fatbin.lock records the
# hashes of the flags, the sources and the fatbins and nvcc's version:
# package kernels' tests check it in milliseconds, without nvcc.
NVCC         ?= nvcc
HASH         := \#
NVCC_FLAGS   := $(shell sed 's/$(HASH).*//' kernels/nvcc.flags)
KERNEL_UNITS := $(basename $(notdir $(wildcard kernels/src/*.cu)))
KERNEL_HDRS  := $(wildcard kernels/src/*.cuh)
NPROC        := $(shell nproc 2>/dev/null || echo 2)
# Where the fatbins go: kernels/fatbin (make kernels) or build/kernels
# (make check-kernels).
KERNEL_OUT   ?= kernels/fatbin
HAVE_NVCC    := $(shell command -v $(NVCC) >/dev/null 2>&1 && echo yes)

# Without a C compiler Go turns cgo off, and neither capi/ (libnccl.so.2,
# the C ABI) nor the CUDA half can be built: make build builds the rest
# (make deps installs gcc).
CGO := $(shell $(GO) env CGO_ENABLED)
ifeq ($(CGO),1)
BUILD_PKGS := ./...
else
BUILD_PKGS := $(shell $(GO) list -f '{{if .GoFiles}}{{.ImportPath}}{{end}}' ./... | grep -v '/capi$$')
endif

all: build

build:
	$(GO) build $(BUILD_PKGS)
	$(GO) build -o $(BIN)/ringo ./cmd/ringo
ifeq ($(HAVE_NVCC)$(CGO),yes1)
	$(MAKE) build-cuda
endif

build-cuda:
	$(GO) build -tags cuda ./...
	$(GO) vet -tags cuda ./...

deps:
	bash scripts/install-deps.sh

kernels:
	@$(MAKE) --no-print-directory -j$(NPROC) $(KERNEL_UNITS:%=kernels/fatbin/%.fatbin)
	rm -f $(filter-out $(KERNEL_UNITS:%=kernels/fatbin/%.fatbin),$(wildcard kernels/fatbin/*.fatbin))
	NVCC=$(NVCC) bash scripts/kernels-lock.sh kernels/fatbin >kernels/fatbin.lock

$(KERNEL_OUT)/%.fatbin: kernels/src/%.cu $(KERNEL_HDRS) kernels/nvcc.flags
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_FLAGS) -o $@ $<

# check-kernels rebuilds every unit (in build/kernels) and compares the
# fatbins and the lock with the committed ones (make test checks the lock
# only: see kernels/lock_test.go).
check-kernels:
	rm -rf build/kernels
	@$(MAKE) --no-print-directory -j$(NPROC) KERNEL_OUT=build/kernels $(KERNEL_UNITS:%=build/kernels/%.fatbin)
	@NVCC=$(NVCC) bash scripts/kernels-lock.sh build/kernels >build/kernels/fatbin.lock
	@diff kernels/fatbin.lock build/kernels/fatbin.lock || { echo "kernels/fatbin is stale: run make kernels and commit it"; exit 1; }
	@echo "kernels/fatbin matches kernels/src (nvcc flags and version in kernels/fatbin.lock)"

gpu-bundle: libnccl
	bash scripts/gpu-bundle.sh

libnccl:
	bash scripts/build-libnccl.sh

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# vet also vets for arm64 what builds without cgo (the plain-Go fallbacks of
# internal/mem's amd64 assembly; capi needs cgo, which a cross build lacks).
vet:
	$(GO) vet ./...
	$(GO) vet -tags ibverbs ./...
	GOARCH=arm64 $(GO) vet $$($(GO) list ./... | grep -v /capi)

test: deps fmt-check vet libnccl test-go build-cuda gpu-bundle

# internal/mem runs without the race detector too: under it, its release
# stores are the plain-Go fallback, so the amd64 assembly is tested only so.
test-go:
	$(GO) test -race -timeout 20m ./...
	$(GO) test ./internal/mem/
	$(GO) test -race -tags ibverbs ./rdma/ ./internal/verbs/
	$(GO) test -race -tags cuda ./internal/cuda/nvtx/

bench: build
	$(BIN)/ringo bench --ranks $(BENCH_RANKS) $(BENCH_FLAGS)

bench-net: build
	bash bench/anchors/net_vs_tcp.sh $(BENCH_NET_FLAGS)

bench-cpu-vs-mpi: build
	NP=$(BENCH_MPI_NP) bash bench/anchors/cpu_vs_mpi.sh $(BENCH_MPI_FLAGS)

mpi-deps:
	bash bench/anchors/cpu_vs_mpi.sh --deps

# Each fuzz target, FUZZTIME each: package:target.
FUZZ_TARGETS := ring:FuzzPlan internal/env:FuzzParseList bootstrap:FuzzDecodeFrame \
	bootstrap:FuzzDecodeHello bootstrap:FuzzParseUniqueID internal/tcp:FuzzIfSpec capi:FuzzParseConfig \
	rdma:FuzzParseHCA rdma:FuzzDecodeHeader transport:FuzzSocketRecv ring:FuzzSchedule internal/env:FuzzParseSubsys \
	bootstrap:FuzzExpandHostlist

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $$t"; $(GO) test ./$${t%%:*} -run '^$$' -fuzz "^$${t##*:}\$$" -fuzztime $(FUZZTIME); \
	done

generate:
	$(GO) generate ./...

clean:
	rm -rf $(BIN) build
