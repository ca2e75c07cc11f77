#!/usr/bin/env bash
# Device call E (2026-12-02c): the shrink-and-grow job's 6-s teardown and lost root — a timeline of every
# worker's sockets, threads and children (fdwatch.py), and PyTorch's watchdog knobs switched off.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/o; mkdir -p $o/shrink; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callE.sh $o/run.sh
t0=$(date +%s)
source /opt/torch/.venv/bin/activate
run() { # name seed env...
  local n=$1 s=$2; shift 2
  python3 build/fdwatch.py 55 > $o/shrink/$n.fd 2>&1 & local w=$!
  env "$@" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,BOOTSTRAP CUDA_VISIBLE_DEVICES=0 LD_PRELOAD="$PWD/$g/lib/libnccl.so.2" timeout 60 python3 bench/pytorch/shrink.py --timeout 45 --seed $s --steps 100 > $o/shrink/$n.log 2>&1
  local rc=$?; kill $w 2>/dev/null; wait $w 2>/dev/null
  echo "$n rc $rc | $(grep -h 'recovered in' $o/shrink/$n.log | sed 's/^\[[0-9]\] //') | $(grep -h 'grown in' $o/shrink/$n.log | sed 's/^\[[0-9]\] //') | $(grep -E '^(OK|FAIL)' $o/shrink/$n.log | tr '\n' ' ')"
}
OFF="TORCH_NCCL_DUMP_ON_TIMEOUT=0 TORCH_NCCL_ENABLE_MONITORING=0 TORCH_NCCL_LOG_CPP_STACK_ON_UNCLEAN_SHUTDOWN=0 TORCH_DISABLE_ADDR2LINE=1"
run base3 3 X=1
run off3 3 $OFF
run base4 4 X=1
run off4 4 $OFF
run dump4 4 TORCH_NCCL_DUMP_ON_TIMEOUT=0
run mon4 4 TORCH_NCCL_ENABLE_MONITORING=0
tar -C $o -czf $OUT/callE.tgz .
echo "=== total $(( $(date +%s) - t0 )) s"
