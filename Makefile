# ringo — every build, test and benchmark step has a target here.
#
#   make            build everything (bin/ringo)
#   make test       gofmt check, go vet, go test -race: what CI runs
#   make bench      the CPU benchmark: ringo bench, one process per rank over shared memory
#   make bench-cpu-vs-mpi  ringo bench next to Open MPI's MPI_Allreduce, same sizes,
#                   and a ratio table (installs Open MPI if missing; bench/anchors/)
#   make mpi-deps   install Open MPI (openmpi-bin, libopenmpi-dev) if mpicc is missing
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

.PHONY: all build test vet fmt-check bench bench-cpu-vs-mpi mpi-deps fuzz generate clean

all: build

build:
	$(GO) build ./...
	$(GO) build -o $(BIN)/ringo ./cmd/ringo

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

test: fmt-check vet
	$(GO) test -race -timeout 20m ./...

bench: build
	$(BIN)/ringo bench --ranks $(BENCH_RANKS) $(BENCH_FLAGS)

bench-cpu-vs-mpi: build
	NP=$(BENCH_MPI_NP) bash bench/anchors/cpu_vs_mpi.sh $(BENCH_MPI_FLAGS)

mpi-deps:
	bash bench/anchors/cpu_vs_mpi.sh --deps

# Each fuzz target, FUZZTIME each: package:target.
FUZZ_TARGETS := ring:FuzzPlan internal/env:FuzzParseList transport:FuzzDecodeFrame \
	transport:FuzzDecodeHello transport:FuzzParseUniqueID transport:FuzzIfSpec

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $$t"; $(GO) test ./$${t%%:*} -run '^$$' -fuzz "^$${t##*:}\$$" -fuzztime $(FUZZTIME); \
	done

generate:
	$(GO) generate ./...

clean:
	rm -rf $(BIN) build
