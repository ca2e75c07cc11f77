#!/usr/bin/env bash
# Device call X (2026-12-02f): the pushed small calls reverted (the kernel of calls T and U): the direct
# tests, and the 4-rank -G 10 -c 1 sweep (hung in call V with pushed calls, ran in call W with them and
# ringo bench's new barrier), twice.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/x; mkdir -p $o/bench; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callX.sh $o/run.sh
t0=$(date +%s)
RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout 150 $g/ringo.test -test.v -test.timeout 145s -test.run 'TestGPUDirectAllReduce|TestGPUWindows|TestGPUProcessesWindows/P2P' > $o/tests.log 2>&1
echo "tests rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^(--- |ok|FAIL|panic)' $o/tests.log | tr '\n' ' ' | cut -c1-500)"
L="-coll all_reduce -b 8 -e 1M -f 2 -n 200 -w 50 -c 1 -G 10"
for i in 1 2; do
  GOTRACEBACK=all timeout -s QUIT 45 $g/ringo bench --gpus 0,0,0,0 $L > $o/bench/direct-4-G-$i.out 2> $o/bench/direct-4-G-$i.err
  echo "direct-4-G-$i: rc $? rows $(grep -cE '^ +[0-9]+ ' $o/bench/direct-4-G-$i.out) wrong $(awk '/^ +[0-9]+ /{w+=$9} END{print w+0}' $o/bench/direct-4-G-$i.out) ($(( $(date +%s) - t0 )) s)"
done
mkdir -p $o/torch; source /opt/torch/.venv/bin/activate
py=bench/pytorch; LP=$PWD/$g/lib/libnccl.so.2
run() { timeout 100 torchrun --standalone "$@"; }
LD_PRELOAD=$LP run --nproc_per_node 2 $py/collectives.py > $o/torch/collectives-2.log 2>&1; echo "collectives.py 2 rc $?: $(grep -c '^OK' $o/torch/collectives-2.log) OK, $(grep -c '^FAIL' $o/torch/collectives-2.log) FAIL ($(( $(date +%s) - t0 )) s)"
LD_PRELOAD=$LP run --nproc_per_node 4 $py/collectives.py > $o/torch/collectives-4.log 2>&1; echo "collectives.py 4 rc $?: $(grep -c '^OK' $o/torch/collectives-4.log) OK, $(grep -c '^FAIL' $o/torch/collectives-4.log) FAIL ($(( $(date +%s) - t0 )) s)"
LD_PRELOAD=$LP run --nproc_per_node 2 $py/ddp_train.py --steps 50 --out $o/torch/ddp-direct.csv > $o/torch/ddp-direct.log 2>&1; echo "ddp direct rc $? ($(( $(date +%s) - t0 )) s)"
RINGO_DIRECT_MAX=0 LD_PRELOAD=$LP run --nproc_per_node 2 $py/ddp_train.py --steps 50 --out $o/torch/ddp-ring.csv > $o/torch/ddp-ring.log 2>&1; echo "ddp ring rc $? ($(( $(date +%s) - t0 )) s)"
python3 $py/compare.py $o/torch/ddp-ring.csv $o/torch/ddp-direct.csv > $o/torch/compare-ring.txt 2>&1; echo "direct vs ring rc $?: $(head -1 $o/torch/compare-ring.txt)"
tar -C $o -czf $OUT/callX.tgz .
echo "=== total $(( $(date +%s) - t0 )) s"
