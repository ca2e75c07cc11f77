#!/usr/bin/env bash
# kernels-lock.sh DIR: prints kernels/fatbin.lock for the fatbins in DIR —
# nvcc's version and the SHA-256 of nvcc's flags (kernels/nvcc.flags), of
# every source in kernels/src and of every fatbin (named fatbin/UNIT.fatbin
# wherever DIR is, so that a rebuild's lock compares with the committed
# one). make kernels writes it beside the fatbins; package kernels'
# TestFatbinLock checks it without nvcc; make check-kernels rebuilds and
# compares.
set -euo pipefail
export LC_ALL=C # the files in one order everywhere
cd "$(dirname "$0")/.."
dir=$(cd "$1" && pwd)
nvcc=${NVCC:-nvcc}
echo "# kernels/fatbin.lock: written by make kernels (scripts/kernels-lock.sh); do not edit."
echo "# nvcc: $("$nvcc" --version | grep -m1 release)"
cd kernels
sha256sum nvcc.flags src/*
cd "$dir"
sha256sum -- *.fatbin | sed 's|  |  fatbin/|'
