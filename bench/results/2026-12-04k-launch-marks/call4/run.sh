#!/usr/bin/env bash
# Call 4: the overlapped launches as committed (every ringo kernel waits for its predecessor at its top and lets
# the next launch after its last step; device.New launches them with programmatic stream serialization).
# Checks first, then A (RINGO_PDL_DISABLE=1) against B (default) through ringo bench, then nccl-tests on the
# library. Ranks share GPU 0.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 RINGO_TIMEOUT=30s
cd build && tar -xJf slim5.tar.xz && cd ..
g=build/gpu R=build/gpu/ringo
run() { # file label args...
  local f=$1 l=$2; shift 2
  echo "### $l: $*" >>$OUT/$f
  if [ $l = A ]; then export RINGO_PDL_DISABLE=1; else unset RINGO_PDL_DISABLE; fi
  timeout 150 $R bench "$@" >>$OUT/$f 2>&1 || echo "rc=$? $l" >>$OUT/$f
  unset RINGO_PDL_DISABLE
}
run check.txt B --gpus 0,0 -coll all -b 8 -e 64M -f 8 -c 1 -d all
run check.txt B --gpus 0,0,0,0 -coll all -b 8 -e 64M -f 8 -c 1
run check.txt B --gpus 0,0 -coll all -b 8 -e 16M -f 8 -c 1 -G 3
run check.txt B --gpus 0,0,0,0 -coll all_reduce,sendrecv,all_gather -b 8 -e 16M -f 8 -c 1 -G 3
awk '$1 ~ /^[0-9]+$/ && NF>=13 {n++; if (($9 != "N/A" && $9 != 0) || ($13 != "N/A" && $13 != 0)) w++} END{print "bench checks:", n, "rows,", w+0, "with wrong"}' $OUT/check.txt
grep -h "^rc=" $OUT/check.txt
BW="-coll all_reduce,sendrecv,all_gather,reduce_scatter -b 1M -e 256M -f 4 -n 20 -w 5 -c 0"
for o in "A B" "B A" "A B"; do for v in $o; do run bw.txt $v --gpus 0,0 $BW; done; done
run bw.txt copy --gpus 0 -coll sendrecv -b 1M -e 256M -f 4 -n 20 -w 5 -c 0
for o in "A B" "B A"; do for v in $o; do run bw.txt $v --gpus 0,0,0,0 -coll all_reduce,sendrecv,alltoall -b 4M -e 256M -f 4 -n 20 -w 5 -c 0; done; done
for o in "A B" "B A"; do for v in $o; do run lat.txt $v --gpus 0,0 -coll all_reduce,sendrecv,all_gather -b 8 -e 1M -f 4 -n 300 -w 50 -c 0; done; done
for o in "A B" "B A"; do for v in $o; do run lat.txt G$v --gpus 0,0 -coll all_reduce,sendrecv,all_gather -b 8 -e 1M -f 4 -n 50 -w 20 -c 0 -G 10; done; done
for o in "A B" "B A"; do for v in $o; do run lat.txt $v --gpus 0,0,0,0 -coll all_reduce,sendrecv -b 8 -e 1M -f 8 -n 200 -w 50 -c 0; done; done
for t in all_reduce all_gather reduce_scatter broadcast reduce; do
  RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 100 $g/${t}_perf -g 2 -b 8 -e 64M -f 8 -n 2 -w 1 -c 1 -d all -o all >>$OUT/nt.txt 2>&1 || echo "rc=$? $t" >>$OUT/nt.txt
done
RINGO_NCCL_TESTS_GPUS=1 LD_LIBRARY_PATH=$g/lib timeout 60 $g/all_reduce_perf -g 2 -b 8 -e 1M -f 8 -c 1 -d all -G 3 >>$OUT/nt.txt 2>&1 || echo "rc=$? ar-G" >>$OUT/nt.txt
awk '/^ +[0-9]+ +[0-9]+ / { rows++; o = ($4 ~ /^-?[0-9]+$/) ? -1 : 0; a = $(9 + o); b = $(13 + o); if (a != 0) w1 += a; if (b != "N/A" && b != 0) w2 += b } END { printf "nccl-tests collectives -g 2 -d all (-o all; all_reduce -G 3): %d rows, #wrong %d / %d\n", rows, w1, w2 }' $OUT/nt.txt
grep -h "rc=" $OUT/nt.txt
bash $g/run.sh $OUT p2p-tests 2>&1 | tail -14
tar -czf $OUT/p2p.tgz -C $OUT p2p && rm -rf $OUT/p2p
for f in bw lat; do
awk '/^### /{l=$2; n=($0 ~ /0,0,0,0/)?"4r":"2r"} /^# [a-z_]+$/{c=$2} $1 ~ /^[0-9]+$/ {print l, n, c, $1, $6, $8}' $OUT/$f.txt | awk '{k=$1" "$2" "$3" "$4; t[k]=t[k]" "$5; b[k]=b[k]" "$6} END{for(k in t) print k, "| t:" t[k], "| bw:" b[k]}' | sort -k2,2 -k3,3 -k4n -k1,1 > $OUT/table-$f.txt
done
cat $OUT/table-bw.txt
