#!/usr/bin/env bash
# Second call on two H200s: the commit that gives ranks of one process on two GPUs the 64-channel
# point-to-point budget by default; nccl-tests send/recv and all-to-all beside NCCL 2.28.9, 3 interleaved
# rounds (the first with -c 1), then the point-to-point tests on GPUs 0,1.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 RINGO_TIMEOUT=60s
cd build && tar -xJf slim11.tar.xz && cd ..
g=build/gpu
nccl=$(/opt/torch/.venv/bin/python -c 'import nvidia.nccl as m, os; print(os.path.join(m.__path__[0], "lib"))')
nt() { local l=$1 lib=$2 b=$3; shift 3
  echo "### $l $b $*" >>$OUT/nt2.txt
  LD_LIBRARY_PATH=$lib timeout 90 $g/$b -g 2 "$@" >>$OUT/nt2.txt 2>&1 || echo "rc=$? $l $b" >>$OUT/nt2.txt; }
for r in 1 2 3; do
  c=0; [ $r = 1 ] && c=1
  for side in nccl ringo; do
    lib=$nccl; [ $side = ringo ] && lib=$g/lib
    nt $side.r$r $lib sendrecv_perf -b 8 -e 1G -f 4 -n 20 -w 5 -c $c
    nt $side.r$r $lib alltoall_perf -b 1K -e 1G -f 4 -n 20 -w 5 -c $c
  done
done
grep -h '^rc=' $OUT/nt2.txt
awk '/^ +[0-9]+ +[0-9]+ / { rows++; for (i = 9; i <= NF; i += 4) if ($i ~ /^[0-9]+$/ && $i != 0) w += $i } END { printf "nccl-tests: %d rows, #wrong %d\n", rows, w }' $OUT/nt2.txt
RINGO_TEST_GPUS=0,1 timeout 200 $g/ringo.test -test.run 'TestGPUPointToPoint|TestGPUScheduleAnyPeer|TestGPUBackToBack' -test.v -test.timeout 190s >$OUT/tests2.txt 2>&1; echo "tests rc=$?" >>$OUT/tests2.txt
grep -E "^--- |^ok|^FAIL|rc=|panic" $OUT/tests2.txt | grep -v "^    ---" | tail -10
awk '/^### /{l=$2" "$3} $1 ~ /^[0-9]+$/ && NF >= 12 && $1 >= 65536 {print l, $1, $8}' $OUT/nt2.txt | sort -k2,2 -k3n -k1,1 | awk '{k=$2" "$3; split($1,a,"."); v[k]=v[k]" "a[1]"="$4} END {for (k in v) print k":"v[k]}' | sort -k1,1 -k2n
awk '/^### /{l=$2" "$3} $1 ~ /^[0-9]+$/ && NF >= 12 && $1 < 65536 && l ~ /sendrecv/ {print l, $1, $6}' $OUT/nt2.txt | sort -k2,2 -k3n -k1,1 | awk '{k=$2" "$3; split($1,a,"."); v[k]=v[k]" "a[1]"="$4"us"} END {for (k in v) print k":"v[k]}' | sort -k1,1 -k2n
