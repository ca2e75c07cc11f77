#!/usr/bin/env bash
# Device call V (2026-12-02f): PyTorch under torchrun with ringo's libnccl.so.2 now that small all-reduces
# between its processes run direct (staged over CUDA IPC): collectives.py (2 and 4 ranks), p2p.py, DDP
# training beside the ring (RINGO_DIRECT_MAX=0) and beside Gloo; the window tests again (refactored);
# the 4-rank graph sweep that stalled in calls K and M.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=/tmp/v; mkdir -p $o/torch $o/bench; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callV.sh $o/run.sh
t0=$(date +%s)
RINGO_TEST_GPUS=0,0 timeout 90 $g/ringo.test -test.v -test.timeout 85s -test.run 'TestGPUWindows|TestGPUProcessesWindows/P2P|TestGPUDirectAllReduce' > $o/tests.log 2>&1
echo "tests rc $? ($(( $(date +%s) - t0 )) s): $(grep -E '^(--- |ok|FAIL|panic)' $o/tests.log | tr '\n' ' ' | cut -c1-500)"
for i in 1 2 3; do
  GOTRACEBACK=all timeout -s QUIT 40 $g/ringo bench --gpus 0,0,0,0 -coll all_reduce -b 8 -e 1M -f 2 -n 200 -w 50 -c 0 -G 5 > $o/bench/g4-$i.out 2> $o/bench/g4-$i.err
  echo "4-rank -G 5 sweep $i: rc $? rows $(grep -cE '^ +[0-9]+ ' $o/bench/g4-$i.out)"
done
L="-coll all_reduce -b 8 -e 1M -f 2 -n 200 -w 50 -c 1"
rb() { local name=$1 gpus=$2; shift 2
  env "$@" timeout 60 $g/ringo bench --gpus $gpus $L $EXTRA > $o/bench/$name.out 2> $o/bench/$name.err
  echo "$name: rc $? rows $(grep -cE '^ +[0-9]+ ' $o/bench/$name.out) wrong $(awk '/^ +[0-9]+ /{w+=$9} END{print w+0}' $o/bench/$name.out)"
}
for n in 2 4; do
  gp=0,0; [ $n = 4 ] && gp=0,0,0,0
  EXTRA= rb ring-$n $gp RINGO_DIRECT_MAX=0
  EXTRA= rb direct-$n $gp X=1
  EXTRA="-G 10" rb ring-$n-G $gp RINGO_DIRECT_MAX=0
  EXTRA="-G 10" rb direct-$n-G $gp X=1
done
A="-g 2 -b 8 -e 1M -f 2 -n 200 -w 50"
for v in ring direct; do
  m=0; [ $v = direct ] && m=256K
  NCCL_DEBUG=WARN RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib RINGO_DIRECT_MAX=$m timeout 60 $g/all_reduce_perf $A -G 10 > $o/bench/nt-$v-G.txt 2>&1
  echo "nt $v -G: rc $? wrong $(awk '/^ +[0-9]+ /{w+=$9+$13} END{print w+0}' $o/bench/nt-$v-G.txt)"
done
echo "bench ($(( $(date +%s) - t0 )) s)"
source /opt/torch/.venv/bin/activate
py=bench/pytorch; L=$PWD/$g/lib/libnccl.so.2
run() { timeout 150 torchrun --standalone "$@"; }
LD_PRELOAD=$L run --nproc_per_node 2 $py/collectives.py > $o/torch/collectives-2.log 2>&1; echo "collectives.py 2 rc $?: $(grep -c '^OK' $o/torch/collectives-2.log) OK, $(grep -c '^FAIL' $o/torch/collectives-2.log) FAIL ($(( $(date +%s) - t0 )) s)"
LD_PRELOAD=$L run --nproc_per_node 4 $py/collectives.py > $o/torch/collectives-4.log 2>&1; echo "collectives.py 4 rc $?: $(grep -c '^OK' $o/torch/collectives-4.log) OK, $(grep -c '^FAIL' $o/torch/collectives-4.log) FAIL ($(( $(date +%s) - t0 )) s)"
LD_PRELOAD=$L run --nproc_per_node 2 $py/p2p.py > $o/torch/p2p-2.log 2>&1; echo "p2p.py 2 rc $?: $(grep -c '^OK' $o/torch/p2p-2.log) OK, $(grep -c '^FAIL' $o/torch/p2p-2.log) FAIL ($(( $(date +%s) - t0 )) s)"
LD_PRELOAD=$L run --nproc_per_node 2 $py/ddp_train.py --steps 50 --out $o/torch/ddp-direct.csv > $o/torch/ddp-direct.log 2>&1; echo "ddp direct rc $? ($(( $(date +%s) - t0 )) s)"
RINGO_DIRECT_MAX=0 LD_PRELOAD=$L run --nproc_per_node 2 $py/ddp_train.py --steps 50 --out $o/torch/ddp-ring.csv > $o/torch/ddp-ring.log 2>&1; echo "ddp ring rc $? ($(( $(date +%s) - t0 )) s)"
python3 $py/compare.py $o/torch/ddp-ring.csv $o/torch/ddp-direct.csv > $o/torch/compare-ring.txt 2>&1; echo "direct vs ring rc $?: $(head -1 $o/torch/compare-ring.txt)"
run --nproc_per_node 2 $py/ddp_train.py --backend gloo --steps 50 --out $o/torch/ddp-gloo.csv > $o/torch/ddp-gloo.log 2>&1; echo "ddp gloo rc $? ($(( $(date +%s) - t0 )) s)"
python3 $py/compare.py $o/torch/ddp-gloo.csv $o/torch/ddp-direct.csv > $o/torch/compare-gloo.txt 2>&1; echo "direct vs gloo rc $?: $(head -1 $o/torch/compare-gloo.txt)"
grep -h "direct\|ring" $o/torch/ddp-direct.log | grep -i "stay\|direct" | head -3
tar -C $o -czf $OUT/callV.tgz .
echo "=== total $(( $(date +%s) - t0 )) s"
t() { awk '/^ +[0-9]+ /{print $6}' $o/bench/$1; }
echo "size | ringo bench 2: ring direct ringG directG | 4: ring direct ringG directG | nt -g2 -G10: ring direct (us)"
paste <(awk '/^ +[0-9]+ /{print $1}' $o/bench/ring-2.out) <(t ring-2.out) <(t direct-2.out) <(t ring-2-G.out) <(t direct-2-G.out) <(t ring-4.out) <(t direct-4.out) <(t ring-4-G.out) <(t direct-4-G.out) <(t nt-ring-G.txt) <(t nt-direct-G.txt)
