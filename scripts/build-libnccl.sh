#!/usr/bin/env bash
# Builds ringo's libnccl.so.2 — the C ABI in capi/, with the cuda tag — into
# build/lib (with the libnccl.so link), then checks it: SONAME libnccl.so.2,
# and every function include/nccl.h declares exported (with its pnccl
# alias), and the functions of newer NCCLs that PyTorch links against
# (capi/nccl_abi.c declares and refuses them). Run programs built against NCCL on it with
# LD_LIBRARY_PATH=build/lib (nccl-tests) or LD_PRELOAD=build/lib/libnccl.so.2
# (PyTorch, whose RPATH would otherwise pick its own NCCL). Also builds
# build/lib/gpu_smoke, a C test of the library on GPUs, when gcc is at hand.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/lib
mkdir -p "$out"
# Export nccl* and pnccl* only (as NCCL's libnccl.map does), keeping the Go
# runtime's and cgo's symbols out of the process's global namespace.
cat >"$out/libnccl.map" <<'MAP'
{
  global: nccl*; pnccl*;
  local: *;
};
MAP
go build -buildmode=c-shared -tags cuda -trimpath \
	-ldflags "-s -w -extldflags '-Wl,-soname,libnccl.so.2 -Wl,--version-script=$PWD/$out/libnccl.map'" \
	-o "$out/libnccl.so.2" ./capi
ln -sf libnccl.so.2 "$out/libnccl.so"
rm -f "$out/libnccl.so.h" "$out/libnccl.map" # the .h is cgo's, not nccl.h

lib="$out/libnccl.so.2"
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" != libnccl.so.2 ]; then
	echo "build-libnccl: $lib has SONAME '$soname', want libnccl.so.2" >&2
	exit 1
fi
exported=$(nm -D --defined-only "$lib" | awk '{ print $3 }')
# Not in include/nccl.h (NCCL 2.27), imported by PyTorch 2.11.
newer="ncclDevCommCreate ncclDevCommDestroy"
missing=0
n=0
for f in $(grep -oE '\bnccl[A-Za-z0-9]+\(' include/nccl.h | tr -d '(' | sort -u) $newer; do
	n=$((n + 1))
	for s in "$f" "p$f"; do
		if ! grep -qx "$s" <<<"$exported"; then
			echo "build-libnccl: $lib does not export $s" >&2
			missing=1
		fi
	done
done
if [ "$missing" != 0 ]; then
	exit 1
fi
echo "build-libnccl: $lib (SONAME $soname) exports all $n functions (include/nccl.h's and $newer) and their pnccl aliases"

# The GPU smoke test, for the GPU machine (it finds libnccl.so.2 beside it):
# build/lib/gpu_smoke [ranks] prints "gpu_smoke: OK".
if command -v gcc >/dev/null; then
	gcc -std=c11 -O1 -Wall -Wextra -I include capi/testdata/gpu_smoke.c -o "$out/gpu_smoke" \
		-L "$out" -l:libnccl.so.2 -lcuda -lpthread -Wl,-rpath,'$ORIGIN'
	echo "build-libnccl: $out/gpu_smoke (capi/testdata/gpu_smoke.c)"
fi
