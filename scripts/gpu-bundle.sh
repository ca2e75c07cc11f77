#!/usr/bin/env bash
# Builds the GPU bundle: everything the GPU machine runs, built here (it has
# no Go toolchain), in build/gpu and packed into build/gpu.tar.xz (xz -9 shares
# the kernels the binaries each embed: ~8 MB instead of ~85). Contents: the
# ringo command, the cuda-tagged tests of the root package (also built with
# -race) and of capi/,
# lib/ (libnccl.so.2 and gpu_smoke, as scripts/build-libnccl.sh left them in
# build/lib: make gpu-bundle builds them first, once; and libncclalloc.so,
# capi/testdata/ncclalloc.c), the NVTX
# recorder TestGPUNVTX loads (libnvtx-inject.so), nccl-tests'
# *_perf binaries (when its source is at hand, see scripts/nccl-tests.sh)
# and run.sh, which runs it all. On the GPU machine, from the repository:
#   python3 -c 'import tarfile; tarfile.open("build/gpu.tar.xz").extractall("build")'
#   build/gpu/run.sh OUT [STAGE...]
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/gpu
rm -rf "$out" "$out.tar.xz" && mkdir -p "$out"
flags=(-tags cuda -trimpath -ldflags '-s -w')
go build "${flags[@]}" -o "$out/ringo" ./cmd/ringo
go test -c "${flags[@]}" -o "$out/ringo.test" .
go test -c -race -tags cuda -trimpath -o "$out/ringo-race.test" . # run.sh's race stage
go test -c "${flags[@]}" -o "$out/capi.test" ./capi
if [ ! -f build/lib/libnccl.so.2 ]; then
	echo "gpu-bundle: no build/lib/libnccl.so.2: run make gpu-bundle (or make libnccl first)" >&2
	exit 1
fi
cp -r build/lib "$out/lib"
cc -O2 -Wall -shared -fPIC -I include -o "$out/lib/libncclalloc.so" capi/testdata/ncclalloc.c -L build/lib -l:libnccl.so.2 # mempool_graphs.py's
cp scripts/gpu-run.sh "$out/run.sh"
cc -O2 -shared -fPIC -o "$out/libnvtx-inject.so" internal/cuda/nvtx/nvtxtest/lib/inject.c # TestGPUNVTX's NVTX recorder
bash scripts/nccl-tests.sh build/nccl-tests
for t in build/nccl-tests/*_perf; do
	[ -x "$t" ] && cp "$t" "$out/"
done
tar -I "xz -9" -cf "$out.tar.xz" -C build gpu
du -sh "$out"/* "$out.tar.xz"
