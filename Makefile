# ringo — every build, test and benchmark step has a target here.
#
#   make            build everything (bin/ringo)
#   make test       gofmt check, go vet, go test -race: what CI runs
#   make bench      the CPU benchmark: ringo bench over host memory
#   make fuzz       every fuzz target for FUZZTIME each
#   make generate   regenerate generated code (stringer)

GO       ?= go
BIN      := bin
FUZZTIME ?= 60s

# make bench: ranks default to the machine's cores (at least 2), sizes 8 B … 128 MiB.
BENCH_RANKS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -lt 2 ] && n=2; echo $$n)
BENCH_FLAGS ?= -b 8 -e 128M -f 2 -n 20 -w 5 -c 1

.PHONY: all build test vet fmt-check bench fuzz generate clean

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

fuzz:
	$(GO) test ./ring -run '^$$' -fuzz '^FuzzPlan$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/env -run '^$$' -fuzz '^FuzzParseList$$' -fuzztime $(FUZZTIME)

generate:
	$(GO) generate ./...

clean:
	rm -rf $(BIN) build
