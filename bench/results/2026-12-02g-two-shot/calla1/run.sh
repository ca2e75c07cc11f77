#!/usr/bin/env bash
# Device call a (2026-12-02g), stage $1:
#   1: two-shot direct all-reduce tests (ranks of one process, processes over CUDA IPC), point-to-point tests
#      with direct messages in 8-KiB parts; ringo bench all-reduce 8 B-16 MiB one/two shots/ring, 2 and 4
#      ranks; send/recv latency beside all-reduce; BenchmarkGPUEnqueue's CPU profile.
#   2: nccl-tests all_reduce_perf on the two-shot sizes (every type and op), -R 2, -G; PyTorch: collectives.py,
#      DDP over two shots against Gloo, mempool_graphs.py (DDP in an NCCL memory pool, FSDP2, graphs).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
st=$1; o=/tmp/o$st; mkdir -p $o/bench $o/torch $o/nt; g=build/gpu
[ -d $g ] || python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/calla.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/calla$st.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
rows() { echo "rows $(grep -cE '^ +[0-9]+ ' $1) wrong $(awk '/^ +[0-9]+ /{w+=$9} END{print w+0}' $1)"; }
if [ "$st" = 1 ]; then
  RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout 230 $g/ringo.test -test.v -test.timeout 225s -test.run 'TestGPUDirectAllReduce|TestGPUAbsentRank|TestGPUWindows|TestGPUPointToPoint|TestGPUKernels' > $o/tests.log 2>&1
  echo "tests rc $? $(el): $(grep -E '^(--- |ok|FAIL|panic)' $o/tests.log | grep -v '^    ' | tr '\n' ' ' | cut -c1-900)"
  save
  RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout 100 $g/ringo.test -test.v -test.timeout 95s -test.run 'TestGPUProcessesWindows/(P2P|two_shots)' > $o/tests-proc.log 2>&1
  echo "proc tests rc $? $(el): $(grep -E '^(--- |ok|FAIL|panic)' $o/tests-proc.log | tr '\n' ' ' | cut -c1-400)"
  save
  L="-coll all_reduce -b 8 -e 16M -f 2 -n 100 -w 20 -c 1"
  run() { local name=$1 gpus=$2; shift 2
    env "$@" timeout 60 $g/ringo bench --gpus $gpus $L > $o/bench/$name.out 2> $o/bench/$name.err
    echo "$name: rc $? $(rows $o/bench/$name.out) $(el)"; }
  for n in 2 4; do
    gp=0,0; [ $n = 4 ] && gp=0,0,0,0
    run default-$n $gp X=1
    run ring-$n $gp RINGO_TWOSHOT_MAX=0
    run two-$n $gp RINGO_DIRECT_MAX=0 RINGO_TWOSHOT_MAX=16M
  done
  save
  L="-coll all_reduce,sendrecv -b 8 -e 1M -f 2 -n 200 -w 50 -c 0"
  run sr-1 0,0 X=1; run sr-2 0,0 X=1
  save
  RINGO_TEST_GPUS=0,0 timeout 60 $g/ringo.test -test.run XXX -test.bench 'BenchmarkGPUEnqueue' -test.benchtime 20000x -test.cpuprofile $o/enqueue.prof > $o/enqueue.txt 2>&1
  echo "enqueue rc $? $(el): $(grep -E 'Benchmark' $o/enqueue.txt | tr '\n' ' ')"
  save
  echo "=== total $(el)"
  t() { awk '/^ +[0-9]+ /{print $6}' $o/bench/$1.out; }
  echo "size default2 ring2 two2 default4 ring4 two4 (us, out of place)"
  paste <(awk '/^ +[0-9]+ /{print $1}' $o/bench/default-2.out) <(t default-2) <(t ring-2) <(t two-2) <(t default-4) <(t ring-4) <(t two-4)
  echo "sendrecv vs all-reduce, 2 ranks (us): size ar1 sr1 ar2 sr2"
  s() { awk -v c=$2 '/^# *Collective/{k=$0} /^ +[0-9]+ /{print}' $o/bench/$1.out; }
  grep -E '^ +[0-9]+ ' $o/bench/sr-1.out | awk '{print $1, $6}' | head -40 | paste -sd' ' | fold -w 2000
  grep -E '^ +[0-9]+ ' $o/bench/sr-2.out | awk '{print $1, $6}' | head -40 | paste -sd' ' | fold -w 2000
fi
if [ "$st" = 2 ]; then
  nt() { local name=$1 bin=$2; shift 2
    RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 90 $g/$bin -g 2 "$@" > $o/nt/$name.out 2>&1
    echo "$name: rc $? rows $(grep -cE '^ +[0-9]+ ' $o/nt/$name.out) wrong $(awk '/^ +[0-9]+ /{w+=$9+$13} END{print w+0}' $o/nt/$name.out) $(el)"; }
  nt ar-all all_reduce_perf -b 200K -e 8M -f 2 -d all -o all -c 1 -n 2 -w 1
  nt ar-R2 all_reduce_perf -b 8 -e 8M -f 4 -c 1 -R 2
  nt ar-G all_reduce_perf -b 8 -e 8M -f 4 -c 1 -G 10
  nt ar-lat all_reduce_perf -b 8 -e 16M -f 2 -c 0 -n 100 -w 20
  save
  source /opt/torch/.venv/bin/activate
  py=bench/pytorch; LP=$PWD/$g/lib/libnccl.so.2
  trun() { timeout 120 torchrun --standalone "$@"; }
  LD_PRELOAD=$LP trun --nproc_per_node 2 $py/collectives.py > $o/torch/collectives-2.log 2>&1; echo "collectives.py 2 rc $?: $(grep -c '^OK' $o/torch/collectives-2.log) OK, $(grep -c '^FAIL' $o/torch/collectives-2.log) FAIL $(el)"
  save
  trun --nproc_per_node 2 $py/mempool_graphs.py --mode ddp --backend gloo --out $o/torch/gloo.csv > $o/torch/gloo.log 2>&1; echo "gloo ddp rc $? $(el)"
  for m in ddp ddp-pool fsdp2; do
    LD_PRELOAD=$LP trun --nproc_per_node 2 $py/mempool_graphs.py --mode $m --out $o/torch/$m.csv > $o/torch/$m.log 2>&1; echo "ringo $m rc $? $(el): $(grep -E 'segments|steps' $o/torch/$m.log | head -2 | tr '\n' ' ')"
    python3 $py/compare.py $o/torch/gloo.csv $o/torch/$m.csv --rtol 1e-5 > $o/torch/compare-$m.txt 2>&1; echo "  vs gloo rc $?: $(head -1 $o/torch/compare-$m.txt)"
    save
  done
  for n in 2 4; do
    LD_PRELOAD=$LP trun --nproc_per_node $n $py/mempool_graphs.py --mode graphs --steps 10 > $o/torch/graphs-$n.log 2>&1; echo "graphs $n rc $? $(el): $(grep -E 'graphs:|wrong' $o/torch/graphs-$n.log | head -3 | tr '\n' ' ')"
    save
  done
  LD_PRELOAD=$LP trun --nproc_per_node 2 $py/ddp_train.py --steps 30 --out $o/torch/ddp-ringo.csv > $o/torch/ddp-ringo.log 2>&1; echo "ddp_train ringo rc $? $(el)"
  trun --nproc_per_node 2 $py/ddp_train.py --steps 30 --backend gloo --out $o/torch/ddp-gloo.csv > $o/torch/ddp-gloo.log 2>&1; echo "ddp_train gloo rc $? $(el)"
  python3 $py/compare.py $o/torch/ddp-gloo.csv $o/torch/ddp-ringo.csv > $o/torch/compare-ddp.txt 2>&1; echo "ddp_train vs gloo rc $?: $(head -1 $o/torch/compare-ddp.txt)"
  save
  echo "=== total $(el)"
  echo "nccl-tests all_reduce_perf -g 2 latency (us, out of place / in place):"
  awk '/^ +[0-9]+ /{print $1, $6, $10}' $o/nt/ar-lat.out | paste -sd' '
fi
