#!/usr/bin/env bash
# The twenty-first session's call on two H200s (nvidia-h200-x2, lent again late in the session): nccl-tests
# beside NCCL 2.28.9 (PyTorch's) in one process (-g 2), 3 interleaved rounds (the first with -c 1), ringo also
# with NCCL_MAX_P2P_NCHANNELS=64 for send/recv and all-to-all (the eighteenth session's lead); graphs and
# registered buffers for small all-reduces; then the two-GPU tests that failed or were not re-run there.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 RINGO_TIMEOUT=60s
cd build && tar -xJf slim10.tar.xz && cd ..
g=build/gpu
nccl=$(/opt/torch/.venv/bin/python -c 'import nvidia.nccl as m, os; print(os.path.join(m.__path__[0], "lib"))')
{ nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=name,driver_version --format=csv; echo "nccl lib: $nccl"; } >$OUT/info.txt 2>&1
cat $OUT/info.txt
t0=$(date +%s); el() { echo "($(( $(date +%s) - t0 )) s)"; }
nt() { # label lib binary args...
  local l=$1 lib=$2 b=$3; shift 3
  echo "### $l $b $*" >>$OUT/nt.txt
  LD_LIBRARY_PATH=$lib timeout 90 $g/$b -g 2 "$@" >>$OUT/nt.txt 2>&1 || echo "rc=$? $l $b" >>$OUT/nt.txt
}
for r in 1 2 3; do
  c=0; [ $r = 1 ] && c=1
  for side in nccl ringo ringo64; do
    lib=$nccl; [ $side != nccl ] && lib=$g/lib
    if [ $side = ringo64 ]; then export NCCL_MAX_P2P_NCHANNELS=64; else unset NCCL_MAX_P2P_NCHANNELS; fi
    nt $side.r$r $lib sendrecv_perf -b 8 -e 1G -f 4 -n 20 -w 5 -c $c
    nt $side.r$r $lib alltoall_perf -b 1K -e 1G -f 4 -n 20 -w 5 -c $c
    [ $side = ringo64 ] && continue
    nt $side.r$r $lib all_reduce_perf -b 8 -e 1G -f 4 -n 20 -w 5 -c $c
    nt $side-G.r$r $lib all_reduce_perf -b 8 -e 64K -f 4 -n 50 -w 10 -c $c -G 10
    nt $side-G.r$r $lib sendrecv_perf -b 8 -e 64K -f 4 -n 50 -w 10 -c $c -G 10
    nt $side-GR1.r$r $lib all_reduce_perf -b 8 -e 4M -f 4 -n 50 -w 10 -c $c -G 10 -R 1
    nt $side-GR2.r$r $lib all_reduce_perf -b 8 -e 4M -f 4 -n 50 -w 10 -c $c -G 10 -R 2
    if [ $r = 1 ]; then
      for b in all_gather_perf reduce_scatter_perf broadcast_perf reduce_perf gather_perf scatter_perf; do
        nt $side.r$r $lib $b -b 8 -e 1G -f 4 -n 20 -w 5 -c 1
      done
    fi
  done
  unset NCCL_MAX_P2P_NCHANNELS
  echo "round $r $(el)"
done
grep -h '^rc=' $OUT/nt.txt
awk '/^ +[0-9]+ +[0-9]+ / { rows++; for (i = 9; i <= NF; i += 4) if ($i ~ /^[0-9]+$/ && $i != 0) w += $i } END { printf "nccl-tests: %d rows, #wrong %d\n", rows, w }' $OUT/nt.txt
left=$(( 560 - ($(date +%s) - t0) ))
echo "tests with $left s left"
RINGO_TEST_GPUS=0,1 timeout $left $g/ringo.test -test.run 'TestGPUProcessesWindows|TestGPURegisterWhilePeerWaits|TestGPUBackToBack|TestGPUPointToPoint' -test.v -test.timeout $((left - 5))s >$OUT/tests.txt 2>&1; echo "tests rc=$?" >>$OUT/tests.txt
grep -E "^--- |^ok|^FAIL|rc=|panic" $OUT/tests.txt | grep -v "^    ---" | tail -30
# the table to read: busbw (out of place) by label and size for sendrecv and alltoall
awk '/^### /{l=$2" "$3} $1 ~ /^[0-9]+$/ && NF >= 12 && (l ~ /sendrecv|alltoall/) && l !~ /-G/ && $1 >= 65536 {print l, $1, $8}' $OUT/nt.txt | sort -k2,2 -k3n -k1,1 | awk '{k=$2" "$3; split($1,a,"."); v[k]=v[k]" "a[1]"="$4} END {for (k in v) print k":"v[k]}' | sort -k1,1 -k2n | tail -40
