#!/usr/bin/env bash
# Builds the GPU bundle in build/gpu: everything the GPU machine runs, built
# here (it has no Go toolchain): the ringo command and the root package's
# tests with the cuda tag, nccl-tests' all_reduce_perf (when its source is
# at hand, see scripts/nccl-tests.sh) and run.sh, which runs it all.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/gpu
rm -rf "$out" && mkdir -p "$out"
flags=(-tags cuda -trimpath -ldflags '-s -w')
go build "${flags[@]}" -o "$out/ringo" ./cmd/ringo
go test -c "${flags[@]}" -o "$out/ringo.test" .
cp scripts/gpu-run.sh "$out/run.sh"
bash scripts/nccl-tests.sh build/nccl-tests
if [ -x build/nccl-tests/all_reduce_perf ]; then
	cp build/nccl-tests/all_reduce_perf "$out/"
fi
du -sh "$out"/*
