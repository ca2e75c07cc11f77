#!/usr/bin/env bash
# Installs what building and testing ringo needs on Debian 12 (bookworm):
# make, git, gcc (cgo and the race detector), iproute2 (network namespaces
# for the multi-host tests), libibverbs-dev (the ibverbs build), the launchers that
# cmd/ringo/launchers_test.go starts ringo bench with (openmpi-bin, mpich, and
# slurmctld, slurmd, slurm-client and munge for a one-node Slurm) and, for the CUDA half of the
# build, Debian's CUDA 11.8 toolkit (nvidia-cuda-toolkit, from the non-free
# component, which this script enables): nvcc, cuda.h and libcuda.so.
# Idempotent: installs only what is missing. Needs root or sudo.
set -euo pipefail

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

need=()
command -v make >/dev/null || need+=(make)
command -v git >/dev/null || need+=(git)
command -v gcc >/dev/null || need+=(gcc)
command -v ip >/dev/null || need+=(iproute2)                            # the multi-host tests' namespaces
[ -f /usr/include/infiniband/verbs.h ] || need+=(libibverbs-dev)       # rdma's ibverbs build
command -v mpirun.openmpi >/dev/null || need+=(openmpi-bin)            # the launcher tests
command -v mpiexec.mpich >/dev/null || need+=(mpich)
command -v srun >/dev/null || need+=(slurm-client)
command -v slurmctld >/dev/null || need+=(slurmctld)
command -v slurmd >/dev/null || need+=(slurmd)
command -v munged >/dev/null || need+=(munge)
if [ "${RINGO_NO_CUDA:-0}" != 1 ] && ! command -v nvcc >/dev/null; then
	need+=(nvidia-cuda-toolkit)
fi
[ ${#need[@]} -eq 0 ] && exit 0

# nvidia-cuda-toolkit lives in non-free: enable contrib, non-free and
# non-free-firmware next to main, in either sources format.
if printf '%s\n' "${need[@]}" | grep -q nvidia-cuda-toolkit; then
	if [ -f /etc/apt/sources.list.d/debian.sources ]; then
		$sudo sed -i -E '/^Components:/{/non-free( |$)/!s/$/ contrib non-free non-free-firmware/}' /etc/apt/sources.list.d/debian.sources
	fi
	if [ -f /etc/apt/sources.list ]; then
		$sudo sed -i -E '/^deb .* main/{/non-free( |$)/!s/ main/ main contrib non-free non-free-firmware/}' /etc/apt/sources.list
	fi
fi
echo "installing: ${need[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"
