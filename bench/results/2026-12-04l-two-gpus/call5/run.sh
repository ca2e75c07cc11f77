#!/usr/bin/env bash
# Call 5, the first on two H200s (nvidia-h200-x2): nccl-tests beside NCCL 2.28.9 (PyTorch's) in one process
# (-g 2), ringo bench with the overlapped launches on and off, then the GPU test suite on GPUs 0,1.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 RINGO_TIMEOUT=60s
cd build && tar -xJf slim5.tar.xz && cd ..
g=build/gpu R=build/gpu/ringo
nccl=$(python3 -c 'import nvidia.nccl as m, os; print(os.path.join(m.__path__[0], "lib"))')
{ nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=name,driver_version --format=csv; } >$OUT/info.txt 2>&1
cat $OUT/info.txt
t0=$(date +%s)
timeout 120 $g/ringo.test -test.run 'TestGPUBackToBack' -test.v >$OUT/tests.txt 2>&1; echo "backtoback rc=$?" >>$OUT/tests.txt
nt() { # label lib binary args...
  local l=$1 lib=$2 b=$3; shift 3
  echo "### $l $b $*" >>$OUT/nt.txt
  LD_LIBRARY_PATH=$lib timeout 120 $g/$b -g 2 "$@" >>$OUT/nt.txt 2>&1 || echo "rc=$? $l $b" >>$OUT/nt.txt
}
for side in nccl ringo; do
  lib=$nccl; [ $side = ringo ] && lib=$g/lib
  nt $side $lib all_reduce_perf -b 8 -e 1G -f 4 -n 20 -w 5 -c 1
  nt $side $lib sendrecv_perf -b 8 -e 1G -f 4 -n 20 -w 5 -c 1
  nt $side $lib alltoall_perf -b 1K -e 1G -f 4 -n 20 -w 5 -c 1
  nt $side $lib all_gather_perf -b 8 -e 1G -f 4 -n 20 -w 5 -c 1
  nt $side-G $lib all_reduce_perf -b 8 -e 1M -f 4 -n 20 -w 5 -c 1 -G 10
  nt $side-G $lib sendrecv_perf -b 8 -e 1M -f 4 -n 20 -w 5 -c 1 -G 10
done
for v in A B A B; do
  echo "### $v" >>$OUT/bench.txt
  if [ $v = A ]; then export RINGO_PDL_DISABLE=1; else unset RINGO_PDL_DISABLE; fi
  timeout 100 $R bench --gpus 0,1 -coll all_reduce,sendrecv,all_gather -b 8 -e 256M -f 8 -n 20 -w 5 -c 0 >>$OUT/bench.txt 2>&1 || echo "rc=$? $v" >>$OUT/bench.txt
  unset RINGO_PDL_DISABLE
done
echo "perf parts took $(( $(date +%s) - t0 )) s"
left=$(( 555 - ($(date +%s) - t0) ))
timeout $left $g/ringo.test -test.run 'TestGPU' -test.skip 'TestGPUBackToBack' -test.v -test.timeout $((left - 5))s >>$OUT/tests.txt 2>&1; echo "suite rc=$?" >>$OUT/tests.txt
grep -E "^--- |^ok|^FAIL|rc=|panic" $OUT/tests.txt | grep -v "^    ---" | tail -60
