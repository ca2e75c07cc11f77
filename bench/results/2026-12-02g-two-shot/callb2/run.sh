#!/usr/bin/env bash
# Device call b (2026-12-02g), stage $1. Bundle: the direct kernels' fences (one release store after the
# block's barrier, no fence.sc by every thread), point-to-point's posts by a release store.
#   1: the graphs hang of call a1 bisected (two shots alone, an 8-MiB ring alone, one shot alone, each under
#      a 40-s limit with SIGQUIT's goroutine dump); the tests again; all-reduce one/two shots/ring and
#      send/recv beside all-reduce.
#   2: nccl-tests all_reduce_perf over the two-shot sizes (every type and op), -R 2, -G, latency; PyTorch:
#      collectives.py, mempool_graphs.py (DDP in an NCCL memory pool, FSDP2, graphs) against Gloo, DDP.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
st=$1; o=/tmp/b$st; mkdir -p $o/bench $o/torch $o/nt; g=build/gpu
python3 -c "import tarfile; tarfile.open('build/gpu.tar.xz').extractall('build')" || exit 1
cp build/callb.sh $o/run.sh
t0=$(date +%s)
save() { tar -C $o -czf $OUT/callb$st.tgz .; }
el() { echo "($(( $(date +%s) - t0 )) s)"; }
rows() { echo "rows $(grep -cE '^ +[0-9]+ ' $1) wrong $(awk '/^ +[0-9]+ /{w+=$9+$13} END{print w+0}' $1)"; }
run() { local name=$1 gpus=$2 lim=$3; shift 3
  env "$@" GOTRACEBACK=all timeout -s QUIT $lim $g/ringo bench --gpus $gpus $L > $o/bench/$name.out 2> $o/bench/$name.err
  echo "$name: rc $? $(rows $o/bench/$name.out) $(el)"; }
if [ "$st" = 1 ]; then
  L="-coll all_reduce -b 1M -e 4M -f 4 -d float -o all -n 2 -w 1 -c 3 -G 3"; run G-two 0,0 40 RINGO_DIRECT_MAX=256K
  L="-coll all_reduce -b 8M -e 8M -d int64 -o all -n 2 -w 1 -c 3 -G 3"; run G-ring8M 0,0 40 RINGO_TWOSHOT_MAX=4M
  L="-coll all_reduce -b 28 -e 256K -f 8 -d float -o all -n 2 -w 1 -c 3 -G 3"; run G-one 0,0 40 RINGO_DIRECT_MAX=256K
  L="-coll all_reduce -b 8M -e 8M -d int64 -o sum -n 2 -w 1 -c 3 -G 3"; run G-ring8M-sum 0,0 40 RINGO_TWOSHOT_MAX=4M
  save
  RINGO_TEST_SWEEP=45s RINGO_TEST_GPUS=0,0 GOTRACEBACK=all timeout -s QUIT 200 $g/ringo.test -test.v -test.timeout 195s -test.run 'TestGPUDirectAllReduce|TestGPUAbsentRank|TestGPUPointToPoint|TestGPUGraphCapture|TestGPUKernels' > $o/tests.log 2>&1
  echo "tests rc $? $(el): $(grep -E '^(--- |ok|FAIL|panic)|^    --- FAIL' $o/tests.log | tr '\n' ' ' | cut -c1-900)"
  save
  RINGO_TEST_GPUS=0,0 timeout 100 $g/ringo.test -test.v -test.timeout 95s -test.run 'TestGPUProcessesWindows/(P2P|two_shots)|TestGPUProcessesPointToPoint/P2P' > $o/tests-proc.log 2>&1
  echo "proc tests rc $? $(el): $(grep -E '^(--- |ok|FAIL|panic)' $o/tests-proc.log | tr '\n' ' ' | cut -c1-400)"
  save
  L="-coll all_reduce -b 8 -e 16M -f 2 -n 100 -w 20 -c 1"
  for n in 2 4; do
    gp=0,0; [ $n = 4 ] && gp=0,0,0,0
    run default-$n $gp 60 X=1; run ring-$n $gp 60 RINGO_TWOSHOT_MAX=0; run two-$n $gp 60 RINGO_DIRECT_MAX=0 RINGO_TWOSHOT_MAX=16M
  done
  L="-coll all_reduce,sendrecv -b 8 -e 1M -f 2 -n 200 -w 50 -c 0"
  run sr-1 0,0 60 X=1; run sr-2 0,0 60 X=1
  save
  echo "=== total $(el)"
  for f in G-two G-ring8M G-one G-ring8M-sum; do echo "$f: $(grep -m1 -E 'goroutine|panic|timed out|SIGQUIT' $o/bench/$f.err)"; done
  t() { awk '/^ +[0-9]+ /{print $6}' $o/bench/$1.out; }
  echo "size default2 ring2 two2 default4 ring4 two4 (us, out of place)"
  paste <(awk '/^ +[0-9]+ /{print $1}' $o/bench/default-2.out) <(t default-2) <(t ring-2) <(t two-2) <(t default-4) <(t ring-4) <(t two-4)
  echo "all-reduce then sendrecv, 2 ranks (us), two runs:"
  for f in sr-1 sr-2; do grep -E '^ +[0-9]+ ' $o/bench/$f.out | awk '{printf "%s:%s ", $1, $6} END{print ""}'; done
fi
if [ "$st" = 2 ]; then
  nt() { local name=$1 bin=$2; shift 2
    RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 90 $g/$bin -g 2 "$@" > $o/nt/$name.out 2>&1
    echo "$name: rc $? $(rows $o/nt/$name.out) $(el)"; }
  nt ar-all all_reduce_perf -b 200K -e 8M -f 2 -d all -o all -c 1 -n 2 -w 1
  nt ar-R2 all_reduce_perf -b 8 -e 8M -f 4 -c 1 -R 2
  nt ar-G all_reduce_perf -b 8 -e 8M -f 4 -c 1 -G 10
  nt ar-lat all_reduce_perf -b 8 -e 16M -f 2 -c 0 -n 100 -w 20
  nt sr-lat sendrecv_perf -b 8 -e 1M -f 2 -c 0 -n 100 -w 20
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
    LD_PRELOAD=$LP trun --nproc_per_node $n $py/mempool_graphs.py --mode graphs --steps 10 > $o/torch/graphs-$n.log 2>&1; echo "graphs $n rc $? $(el): $(grep -E 'graphs:|wrong|Error' $o/torch/graphs-$n.log | head -3 | tr '\n' ' ')"
    save
  done
  LD_PRELOAD=$LP trun --nproc_per_node 2 $py/ddp_train.py --steps 30 --out $o/torch/ddp-ringo.csv > $o/torch/ddp-ringo.log 2>&1; echo "ddp_train ringo rc $? $(el)"
  trun --nproc_per_node 2 $py/ddp_train.py --steps 30 --backend gloo --out $o/torch/ddp-gloo.csv > $o/torch/ddp-gloo.log 2>&1; echo "ddp_train gloo rc $? $(el)"
  python3 $py/compare.py $o/torch/ddp-gloo.csv $o/torch/ddp-ringo.csv > $o/torch/compare-ddp.txt 2>&1; echo "ddp_train vs gloo rc $?: $(head -1 $o/torch/compare-ddp.txt)"
  save
  echo "=== total $(el)"
  echo "nccl-tests -g 2 (us, out of place / in place): all_reduce_perf then sendrecv_perf"
  awk '/^ +[0-9]+ /{printf "%s:%s/%s ", $1, $6, $10} END{print ""}' $o/nt/ar-lat.out
  awk '/^ +[0-9]+ /{printf "%s:%s/%s ", $1, $6, $10} END{print ""}' $o/nt/sr-lat.out
fi
