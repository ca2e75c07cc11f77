#!/usr/bin/env bash
# The twenty-first session's one GPU call: main after the crowded waits by core (core words, moves),
# which no GPU kernel uses but the GPU ranks' host waits share. nccl-tests' checks on
# ringo's library (ranks sharing GPU 0), then the whole TestGPU* suite (run.sh's test stage).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 RINGO_TIMEOUT=20s
cd build && tar -xJf slim10.tar.xz && cd ..
g=build/gpu
t0=$(date +%s); el() { echo "($(( $(date +%s) - t0 )) s)"; }
chk() { echo "### $*" >>$OUT/chk.txt; timeout 60 env RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib "$@" >>$OUT/chk.txt 2>&1 || echo "rc=$? $*" >>$OUT/chk.txt; }
chk $g/all_reduce_perf -g 2 -b 8 -e 4M -f 4 -n 5 -w 2 -c 1 -d all -o all
chk $g/sendrecv_perf -g 2 -b 8 -e 4M -f 4 -n 5 -w 2 -c 1 -d all
chk $g/alltoall_perf -g 4 -b 64 -e 1M -f 8 -n 5 -w 2 -c 1 -d all
chk $g/gather_perf -g 4 -b 64 -e 1M -f 8 -n 5 -w 2 -c 1
chk $g/scatter_perf -g 4 -b 64 -e 1M -f 8 -n 5 -w 2 -c 1
echo "checks $(el)"; grep -h '^rc=' $OUT/chk.txt
awk '/^ +[0-9]+ +[0-9]+ / { rows++; for (i = 9; i <= NF; i += 4) if ($i ~ /^[0-9]+$/ && $i != 0) w += $i } END { printf "nccl-tests checks: %d rows, #wrong %d\n", rows, w }' $OUT/chk.txt
RINGO_TEST_GPUS=0,0 RINGO_TEST_TIMEOUT=$(( 575 - $(date +%s) + t0 )) bash $g/run.sh $OUT test 2>&1 | tail -8
echo "suite $(el)"
