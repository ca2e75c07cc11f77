#!/usr/bin/env bash
# Builds nccl-tests' *_perf into OUT (default build/nccl-tests) — the five
# ring collectives, and sendrecv, alltoall, alltoallv, gather, scatter and
# hypercube (made of ncclSend and ncclRecv with nccl.h's 2.27 version) —
# with the local nvcc for sm_90, against ringo's include/nccl.h. The
# sources are nccl-tests' own; every one is compiled with
# scripts/nccl-tests-gpus.h pre-included, which, only when
# RINGO_NCCL_TESTS_GPUS=N is set at run time, takes nccl-tests' device
# ordinals modulo N, so that -g 2 runs two ranks on one GPU. It links
# against a stand-in libnccl.so that only carries the names: at run time
# LD_LIBRARY_PATH picks the real library — NCCL's, or ringo's libnccl.so.2.
# The source comes from NCCL_TESTS_SRC (default ../shared/third_party/
# nccl-tests beside the repository, or beside its main checkout when this is
# a git worktree); without it the build is skipped, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
src=${NCCL_TESTS_SRC:-../shared/third_party/nccl-tests}
if [ -z "${NCCL_TESTS_SRC:-}" ] && [ ! -f "$src/src/common.cu" ]; then
	main=$(dirname "$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null || echo .)")
	src=$main/../shared/third_party/nccl-tests
fi
out=$(realpath -m "${1:-build/nccl-tests}")
if [ ! -f "$src/src/common.cu" ]; then
	echo "nccl-tests: no source at $src (set NCCL_TESTS_SRC); not built"
	exit 0
fi
rm -rf "$out" && mkdir -p "$out/home/lib" "$out/home/include" "$out/src"
cp -r "$src"/. "$out/src/"
chmod -R u+w "$out/src"
cp include/nccl.h "$out/home/include/"
# The stand-in: every function nccl.h declares, as a symbol.
grep -oE '\bnccl[A-Za-z0-9]+\(' include/nccl.h | tr -d '(' | sort -u |
	awk '{ printf "int %s(void) { return 5; }\n", $1 }' >"$out/home/stub.c"
gcc -shared -fPIC -Wl,-soname,libnccl.so.2 -o "$out/home/lib/libnccl.so" "$out/home/stub.c"
nvcc_bin=$(command -v nvcc)
cuda_home=$(dirname "$(dirname "$nvcc_bin")")
cuda_lib=$cuda_home/lib64
[ -d "$cuda_lib" ] || cuda_lib=/usr/lib/x86_64-linux-gnu
cxx=$(command -v cuda-g++ || command -v g++-11 || command -v g++)
bins=()
for t in all_reduce reduce_scatter all_gather broadcast reduce sendrecv alltoall alltoallv gather scatter hypercube; do
	bins+=("$out/${t}_perf")
done
make -s -C "$out/src/src" BUILDDIR="$out" NCCL_HOME="$out/home" CUDA_HOME="$cuda_home" CUDA_LIB="$cuda_lib" \
	CXX="$cxx" CUDARTLIB=cudart_static MPI=0 \
	NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90 -include $PWD/scripts/nccl-tests-gpus.h" "${bins[@]}"
strip "${bins[@]}"
echo "nccl-tests: built ${bins[*]}"
