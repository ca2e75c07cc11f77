#!/usr/bin/env bash
# Call 4: nccl-tests on ringo's libnccl.so.2 after the eight-packs kernels, ranks sharing GPU 0: the five
# collectives with every type and op, and run.sh's p2p-tests stage (every point-to-point *_perf, every type).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
cd build && tar -xJf slim4.tar.xz && cd ..
g=build/gpu
for t in all_reduce all_gather reduce_scatter broadcast reduce; do
  RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 100 $g/${t}_perf -g 2 -b 8 -e 64M -f 8 -n 2 -w 1 -c 1 -d all -o all >>$OUT/colls.txt 2>&1 || echo "rc=$? $t" >>$OUT/colls.txt
done
awk '/^ +[0-9]+ +[0-9]+ / { rows++; o = ($4 ~ /^-?[0-9]+$/) ? -1 : 0; a = $(9 + o); b = $(13 + o); if (a != 0) w1 += a; if (b != "N/A" && b != 0) w2 += b } END { printf "collectives -g 2 -d all -o all: %d rows, #wrong %d / %d\n", rows, w1, w2 }' $OUT/colls.txt
grep -h "rc=\|Out of bounds" $OUT/colls.txt | sort | uniq -c
bash $g/run.sh $OUT p2p-tests 2>&1 | tail -15
