#!/usr/bin/env bash
# Call 6: markets v2 (one open-mask word, relaxed scans, GPU-scope fences; C) against the eight-packs kernels (A),
# ranks sharing GPU 0: latency first (orders alternating), bandwidth, correctness, a trace.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
cd build && tar -xJf mk.tar.xz && cd ..
A=build/mk/ringo-a C=build/mk/ringo-c
run() { # file label bin args...
  local f=$1 l=$2 b=$3; shift 3
  echo "### $l: $*" >>$OUT/$f
  timeout 100 $b bench "$@" >>$OUT/$f 2>&1 || echo "rc=$? $l" >>$OUT/$f
}
for o in "A C" "C A" "A C"; do
  for v in $o; do run lat.txt lat-$v ${!v} --gpus 0,0 -coll sendrecv -b 8K -e 4M -f 2 -n 200 -w 50 -c 0; done
done
for o in "A C" "C A"; do
  for v in $o; do
    run ab.txt bw-$v ${!v} --gpus 0,0 -coll sendrecv -b 16M -e 1G -f 2 -n 20 -w 5 -c 0
    run ab.txt bw4-$v ${!v} --gpus 0,0,0,0 -coll sendrecv,alltoall -b 4M -e 1G -f 4 -n 10 -w 3 -c 0
  done
done
run check.txt c2 $C --gpus 0,0 -coll sendrecv,alltoall,gather,scatter -b 1M -e 256M -f 4 -n 2 -w 1 -c 1
run check.txt c2i $C --gpus 0,0 -coll sendrecv,alltoall -b 1M -e 64M -f 8 -n 2 -w 1 -c 1 -d int8
run check.txt c4 $C --gpus 0,0,0,0 -coll sendrecv,alltoall,gather,scatter -b 1M -e 256M -f 4 -n 2 -w 1 -c 1
awk '$1 ~ /^[0-9]+$/ {rows++; if ($9 != 0 && $9 != "N/A") w++; if ($13 != 0 && $13 != "N/A") w++} END {print "check rows", rows, "wrong", w+0}' $OUT/check.txt
grep -h "rc=" $OUT/check.txt
RINGO_TEST_GPUS=0,0 timeout 60 build/mk/ringo.test -test.run 'TestGPU(PointToPoint|ScheduleAnyPeer|GraphCapture|AbsentRank|SharedGPU)$' -test.v -test.timeout 55s >$OUT/tests.txt 2>&1; echo "tests rc=$?" >>$OUT/tests.txt
RINGO_TEST_GPUS=0,0,0,0 timeout 60 build/mk/ringo.test -test.run 'TestGPU(PointToPoint|ScheduleAnyPeer)$' -test.v -test.timeout 55s >>$OUT/tests.txt 2>&1; echo "tests4 rc=$?" >>$OUT/tests.txt
grep "^--- \|rc=" $OUT/tests.txt
for t in "sendrecv -g 2 -b 8 -e 256M -f 8" "alltoall -g 4 -b 64 -e 256M -f 8" "sendrecv -g 4 -b 8 -e 256M -f 8"; do
  set -- $t; n=$1; shift
  echo "### ${n}_perf $*" >>$OUT/nt.txt
  RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=build/mk timeout 60 build/mk/${n}_perf "$@" -n 2 -w 1 -c 1 -d all >>$OUT/nt.txt 2>&1 || echo "rc=$? $n" >>$OUT/nt.txt
done
awk '/^ +[0-9]+ +[0-9]+ / { rows++; a = $9; if (a != 0) w += a } END { print "nccl-tests rows", rows, "wrong out of place", w+0 }' $OUT/nt.txt
grep -h "rc=\|Out of bounds" $OUT/nt.txt | sort | uniq -c
RINGO_TRACE=$OUT/trace-64M.json run ab.txt trace-C $C --gpus 0,0 -coll sendrecv -b 64M -e 64M -n 6 -w 2 -c 0
