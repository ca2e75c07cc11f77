#!/usr/bin/env bash
# Device call (2026-12-02h), stage $1:
#   1: direct point-to-point halves as one unit of a whole chunk (up to 16 MiB), plans uploaded on the call's
#      stream: GPU tests (point-to-point, streams without round-0 waits, graphs x6, graphs with 3 hardware queues x3),
#      ringo bench send/recv latency beside all-reduce, send/recv and all-to-all bandwidth beside one copy,
#      nccl-tests sendrecv/alltoall/alltoallv -d all.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
st=$1; o=/tmp/o$st; mkdir -p $o/bench $o/nt; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callh.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/callh$st.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
rows() { echo "rows $(grep -cE '^ +[0-9]+ ' $1) wrong $(awk '/^ +[0-9]+ /{w+=$9} END{print w+0}' $1)"; }
tl() { grep -E '^(--- |ok|FAIL|panic)' $1 | tr '\n' ' ' | cut -c1-600; }
if [ "$st" = 1 ]; then
  RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 150 $g/ringo.test -test.v -test.timeout 145s -test.run 'TestGPUPointToPoint|TestGPUStreams|TestGPUKernels|TestGPUAbsentRank' > $o/tests.log 2>&1
  echo "tests rc $? $(el): $(tl $o/tests.log)"
  save
  for i in 1 2 3 4 5 6; do
    RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 14 $g/ringo.test -test.v -test.run 'TestGPUDirectAllReduce/graphs' > $o/graphs-$i.log 2>&1
    echo "graphs $i rc $? $(el)"
  done
  for i in 1 2 3; do
    CUDA_DEVICE_MAX_CONNECTIONS=3 RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 14 $g/ringo.test -test.v -test.run 'TestGPUDirectAllReduce/graphs' > $o/graphs-q3-$i.log 2>&1
    echo "graphs with 3 queues $i rc $? $(el)"
  done
  save
  run() { local name=$1 gpus=$2; shift 2
    env "$@" timeout 90 $g/ringo bench --gpus $gpus $L > $o/bench/$name.out 2> $o/bench/$name.err
    echo "$name: rc $? $(rows $o/bench/$name.out) $(el)"; }
  L="-coll all_reduce,sendrecv -b 8 -e 1M -f 2 -n 200 -w 50 -c 0"
  run sr-1 0,0 X=1; run sr-2 0,0 X=1
  save
  L="-coll sendrecv -b 64M -e 1G -f 2 -n 20 -w 5 -c 0"
  run copy 0 X=1
  L="-coll sendrecv,alltoall -b 4M -e 1G -f 2 -n 20 -w 5 -c 1"
  run bw-2 0,0 X=1; run bw-4 0,0,0,0 X=1
  save
  nt() { local name=$1 bin=$2; shift 2
    RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 90 $g/$bin "$@" > $o/nt/$name.out 2>&1
    echo "$name: rc $? rows $(grep -cE '^ +[0-9]+ ' $o/nt/$name.out) wrong $(awk '/^ +[0-9]+ /{w+=$9+$13} END{print w+0}' $o/nt/$name.out) $(el)"; }
  nt sendrecv sendrecv_perf -g 2 -b 8 -e 64M -f 8 -d all -c 1 -n 2 -w 1
  nt alltoall alltoall_perf -g 4 -b 64 -e 64M -f 8 -d all -c 1 -n 2 -w 1
  nt alltoallv alltoallv_perf -g 4 -b 64 -e 16M -f 16 -d all -c 1 -n 2 -w 1
  save
  echo "=== total $(el)"
  echo "copy (world of one, GB/s): $(awk '/^ +[0-9]+ /{printf "%s %s  ", $1, $8}' $o/bench/copy.out)"
  for f in bw-2 bw-4; do echo "$f busbw (size coll busbw):"; awk '/^# *Collective|^#.*(sendrecv|alltoall)/{c=$0} /^ +[0-9]+ /{printf "%s %s | ", $1, $8}' $o/bench/$f.out; echo; done
  echo "latency us (size time) run 1 then run 2:"
  for f in sr-1 sr-2; do awk '/^ +[0-9]+ /{printf "%s %s, ", $1, $6}' $o/bench/$f.out; echo; done
fi
